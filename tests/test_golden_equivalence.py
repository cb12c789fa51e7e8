"""Run golden cases on the CPU: the pipeline-mode input and its converted output give the same batches.

Cases opt in with a ``# golden-run:`` header line (see ``tests/golden/README.md``). Both files are
moved onto the CPU with :func:`dali_migrate.device_cpu.to_cpu`, reduced to their imports,
definitions and constants (no module-level code runs, ``if __name__ == "__main__"`` included) and
imported from a temporary folder. The pipeline is built and run ``iterations`` times; the converted
generator gives ``iterations`` items; every output of every iteration must match sample by sample:
dtype, shape, layout and values (exactly).
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import libcst as cst
import libcst.matchers as m
import pytest

from dali_migrate.device_cpu import to_cpu
from dali_migrate.model import MARKER_PREFIX

np = pytest.importorskip("numpy")
pytest.importorskip("nvidia.dali")
ndd = pytest.importorskip("nvidia.dali.experimental.dynamic")

GOLDEN = Path(__file__).resolve().parent / "golden"
HEADER = "# golden-run:"
KEYS = ("pipe", "args", "kwargs", "iterations", "needs")
MIN_RUN_CASES = 10
_FRAMEWORKS = ("jax", "paddle")  # optional extras, not in dev


def parse_header(text: str):
    """The ``# golden-run:`` settings of a case as strings, or None when the case does not run."""
    for line in text.splitlines():
        if line.startswith(HEADER):
            rest = line[len(HEADER) :].strip()
            parts = re.split(r"\s+(?=(?:%s)=)" % "|".join(KEYS), rest)
            found = {}
            for part in parts:
                key, _, value = part.partition("=")
                if key not in KEYS:
                    raise ValueError(f"unknown golden-run key {key!r} in {line!r}")
                found[key] = value
            if "pipe" not in found:
                raise ValueError(f"golden-run header without pipe=: {line!r}")
            return found
    return None


def run_cases() -> list:
    found = []
    for path in sorted(GOLDEN.glob("*.py")):
        if path.name.endswith(".expected.py"):
            continue
        if parse_header(path.read_text(encoding="utf-8")) is not None:
            found.append(path.name[: -len(".py")])
    return found


CASES = run_cases()


def _definitions_only(source: str) -> str:
    """Imports, functions, classes and constant assignments (numpy arrays of literal values
    included): what defining the pipeline needs."""
    module = cst.parse_module(source)
    numpy = {
        alias.asname.name.value if alias.asname else "numpy"
        for stmt in module.body if isinstance(stmt, cst.SimpleStatementLine)
        for small in stmt.body if isinstance(small, cst.Import)
        for alias in small.names if isinstance(alias.name, cst.Name) and alias.name.value == "numpy"
    }

    def keep(stmt) -> bool:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            return True
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    continue
                if isinstance(small, cst.Assign) and (not _has_call(small.value) or _literal_array(small.value, numpy)):
                    continue
                return False
            return True
        return False

    return module.with_changes(body=[s for s in module.body if keep(s)]).code


def _function_code(source: str, name: str) -> str:
    module = cst.parse_module(source)
    for stmt in module.body:
        # a Pipeline subclass, in an input, is converted into the function of its name
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) and stmt.name.value == name:
            return module.code_for_node(stmt)
    raise AssertionError(f"no top-level function or class {name}")


def _literal_array(node, numpy: set) -> bool:
    """``np.array([[1, 2], [3, 4]], dtype=np.int32)``: one numpy call of literal values."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and m.matches(node.func.value, m.OneOf(*map(m.Name, numpy)))):
        return False
    return all(
        not _has_call(a.value) and all(n.value in numpy for n in m.findall(a.value, m.Name()) if not _attr_of(n, a.value))
        for a in node.args
    )


def _attr_of(name, root) -> bool:
    """Is ``name`` the attribute of an ``x.attr`` within ``root`` (``int32`` of ``np.int32``)?"""
    return any(att.attr is name for att in m.findall(root, m.Attribute()))


def _has_call(node) -> bool:
    found = []

    class _V(cst.CSTVisitor):
        def visit_Call(self, n):
            found.append(n)

    node.visit(_V())
    return bool(found)


def _import(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    return module


def _layout(value) -> str:
    return value or ""


def test_enough_run_cases():
    assert len(CASES) >= MIN_RUN_CASES, CASES


def test_header_parsing():
    h = parse_header('# golden-run: pipe=p args=(str(DATA / "a b"), 1) kwargs={"batch_size": 4} iterations=12\n')
    assert h == {"pipe": "p", "args": '(str(DATA / "a b"), 1)', "kwargs": '{"batch_size": 4}', "iterations": "12"}
    assert parse_header("import x\n") is None


@pytest.mark.parametrize("name", CASES)
def test_same_batches(name, fixture_data, tmp_path):
    source = (GOLDEN / f"{name}.py").read_text(encoding="utf-8")
    converted = (GOLDEN / f"{name}.expected.py").read_text(encoding="utf-8")
    header = parse_header(source)
    # Only deterministic, fully converted cases can be compared exactly.
    pipe_name = header["pipe"]
    assert MARKER_PREFIX not in converted, "a run case must convert without markers"
    assert "rng=" not in _function_code(converted, pipe_name), "a run case must not use random operators"
    assert not re.search(r"(random_shuffle|shuffle_after_epoch)=True", _function_code(source, pipe_name)), (
        "a run case must not shuffle"
    )

    # A case written for a framework's iterator runs where that framework is installed (the
    # jax and paddle extras; CI runs these cases in the step that installs each).
    for framework in _FRAMEWORKS:
        if re.search(rf"^\s*(import {framework}\b|from {framework}\b|from nvidia\.dali\.plugin(\.{framework}\b| import {framework}\b))", source, re.M):
            pytest.importorskip(framework)

    env = {"DATA": Path(fixture_data), "str": str}
    args = eval(header.get("args", "()"), env)  # noqa: S307 - test data written in this repository
    kwargs = eval(header.get("kwargs", "{}"), env)  # noqa: S307
    for need in eval(header.get("needs", "()"), env):  # noqa: S307 - fixtures read under a given directory
        if not (Path(fixture_data) / need).exists():
            pytest.skip(f"fixture {need} was not generated here (see fixtures/README.md)")
    iterations = int(header.get("iterations", "12"))
    # DALI 2.4's dynamic mode can deadlock when the thread count goes down within one process
    # (ndd.set_num_threads(2), run a decoder, ndd.set_num_threads(1), run it again): every case runs
    # with the count already in force, which the converted code then sets without changing it.
    kwargs["num_threads"] = ndd.get_num_threads()
    # A Pipeline subclass's header names device_id too (`dali-migrate verify` passes only the header's).
    kwargs["device_id"] = None
    pipe_name = header["pipe"]

    (tmp_path / "original.py").write_text(_definitions_only(to_cpu(source)), encoding="utf-8")
    (tmp_path / "converted.py").write_text(_definitions_only(to_cpu(converted)), encoding="utf-8")
    original = _import(tmp_path / "original.py", f"golden_original_{name}")
    dynamic = _import(tmp_path / "converted.py", f"golden_converted_{name}")

    # The original runs all its iterations first, then the converted code, each as a program of its
    # own would: both run the pipeline's own code when it is made (np.random.seed() in the body),
    # and a case that draws from numpy's global state would see the other's draws interleaved.
    pipe = getattr(original, pipe_name)(*args, **kwargs)
    pipe.build()
    runs = []
    for _ in range(iterations):
        runs.append([(len(tl), tl.layout(), [np.array(tl.at(i), copy=True) for i in range(len(tl))]) for tl in pipe.run()])
    del pipe
    gen = getattr(dynamic, pipe_name)(*args, **kwargs)

    for it, expected in enumerate(runs):
        got = next(gen)
        assert isinstance(got, tuple), f"iteration {it}: the generator must yield a tuple"
        assert len(got) == len(expected), f"iteration {it}: {len(got)} outputs instead of {len(expected)}"
        for k, ((size, layout, samples), batch) in enumerate(zip(expected, got)):
            where = f"iteration {it}, output {k}"
            assert batch.batch_size == size, f"{where}: batch size"
            assert _layout(batch.layout) == _layout(layout), f"{where}: layout"
            for i, want in enumerate(samples):
                have = np.asarray(batch.select(i))
                assert have.dtype == want.dtype, f"{where}, sample {i}: dtype {have.dtype} != {want.dtype}"
                assert have.shape == want.shape, f"{where}, sample {i}: shape {have.shape} != {want.shape}"
                assert np.array_equal(have, want), f"{where}, sample {i}: values differ"
