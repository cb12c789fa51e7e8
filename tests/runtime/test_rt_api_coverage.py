"""Every public name of native ndd's API (its `__init__.pyi` and submodules) exists in the
runtime, except the reasoned list below."""

import ast
import importlib
import importlib.util
import os

import pytest

pytest.importorskip("nvidia.dali")

import dali_migrate.runtime as rt  # noqa: E402
import nvidia.dali  # noqa: E402

# The runtime implements DALI 2.4's dynamic-mode API; older releases' native ndd (1.52-2.3) had a
# different one (no streams, checkpoint or capture modules, other operator sets), so there is
# nothing to compare the runtime's surface with.
_V = tuple(int(x) for x in nvidia.dali.__version__.split(".")[:2])
pytestmark = pytest.mark.skipif(_V < (2, 4), reason=f"native ndd {nvidia.dali.__version__} has an older API than 2.4's")

_NATIVE = "nvidia.dali.experimental.dynamic"

# Public names of native ndd the runtime deliberately lacks, and why.
EXCLUDED = {
    # torchdata nodes (`pytorch.nodes.Reader/DictMapper/ToTorch`) over native's internal
    # `_ops.Reader`; needs torchdata (not installed here, so it could not be tested) and exists
    # natively only when torchdata is importable.
    "pytorch",
}

# Native submodules whose public names must all exist in the runtime's module of that name.
SUBMODULES = ["readers", "random", "math", "noise", "decoders", "io", "experimental",
              "segmentation", "transforms", "reductions", "checkpoint", "capture"]


def _native_dir():
    spec = importlib.util.find_spec(_NATIVE)
    return os.path.dirname(spec.origin)


_stub = []


def _stub_names():
    """Names the stub exports from ndd itself (typing helpers it imports are not API)."""
    if _stub:
        return _stub[0]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the stub's docstrings have invalid escapes
        tree = ast.parse(open(os.path.join(_native_dir(), "__init__.pyi")).read())
    names = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            from_ndd = node.level == 1 or (node.module or "").startswith(_NATIVE)
            if not from_ndd:
                continue
            for a in node.names:
                name = a.asname or a.name
                if not name.startswith("_"):
                    names.add(name)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets
                         if isinstance(t, ast.Name) and not t.id.startswith("_"))
    _stub.append(names)
    return names


def test_stub_is_readable():
    names = _stub_names()
    assert {"Tensor", "Batch", "EvalContext", "Stream", "ThreadPool", "imread",
            "ExternalSource", "checkpoint", "readers"} <= names


def test_top_level_names():
    missing = sorted(n for n in _stub_names() - EXCLUDED if not hasattr(rt, n))
    assert missing == []


def test_excluded_really_missing():
    """Keep the list honest: drop an entry once the runtime has it."""
    assert [n for n in EXCLUDED if hasattr(rt, n)] == []


@pytest.mark.parametrize("sub", SUBMODULES)
def test_submodule_names(sub):
    native = importlib.import_module(f"{_NATIVE}.{sub}")
    mine = getattr(rt, sub)
    public = [n for n in dir(native) if not n.startswith("_")
              and not getattr(getattr(native, n), "__name__", "").startswith(("typing", "annotations"))]
    # module-level imports of helper modules/typing names are not API
    public = [n for n in public if not (isinstance(getattr(native, n), type(os))
                                         and not getattr(native, n).__name__.startswith(_NATIVE))]
    public = [n for n in public if n not in {"annotations", "Any", "NamedTuple", "Optional"}]
    missing = sorted(n for n in public if not hasattr(mine, n))
    assert missing == [], f"{sub}: {missing}"


def test_stream_and_thread_pool_signatures():
    import inspect

    native = importlib.import_module(_NATIVE)
    for name in ("stream", "set_default_stream", "get_default_stream", "set_current_stream",
                 "get_current_stream", "set_num_threads", "get_num_threads", "imread"):
        a = [(p.name, p.kind) for p in inspect.signature(getattr(native, name)).parameters.values()]
        b = [(p.name, p.kind) for p in inspect.signature(getattr(rt, name)).parameters.values()]
        if name == "imread":  # native spells out every decoders.image argument (makefun)
            a = a[:2]
            b = b[:2]
        assert a == b, name
    for cls, meth in (("EvalContext", "__init__"), ("ThreadPool", "__init__"),
                      ("Stream", "__init__"), ("ExternalSource", "__init__")):
        a = list(inspect.signature(getattr(getattr(native, cls), meth)).parameters)
        b = list(inspect.signature(getattr(getattr(rt, cls), meth)).parameters)
        assert a == b, cls
