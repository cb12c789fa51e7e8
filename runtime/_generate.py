"""Build the ndd-style API from DALI's schema registry at import: one function per operator
(readers get a class, see _readers), placed in the same module layout native ndd uses
(`decoders.image`, `random.uniform`, top-level moved experimental ops through aliases...).
No per-operator code: everything comes from the schemas.
"""

import sys
import types

from nvidia.dali.fn import _to_snake_case

from . import _backend as _be
from . import _ops, _seeds

# The same exclusions as native ndd (its _op_filter): Python-bodied ops, pipeline inputs,
# pipeline-only constants, and anything deprecated at or before 2.0.
_EXCLUDED_SUFFIXES = ("ExternalSource", "PythonFunction", "NumbaFunction", "JaxFunction",
                      "experimental__inputs__Video", "Constant")
_CUTOFF = (2, 0)


def _version(s):
    return tuple(int(p) for p in s.split(".")[:2] if p.isdigit())


def exposed(schema_name):
    if schema_name.endswith(_EXCLUDED_SUFFIXES):
        return False
    for s in _be.schema_and_target(schema_name):
        if s is None or s.IsInternal() or _be.is_abstract(s):
            return False
        if s.IsDeprecated():
            v = _be.deprecated_in_version(s)
            if not v or _version(v) <= _CUTOFF:
                return False
    return True


def is_reader(schema):
    return "readers" in schema.ModulePath()


def make_function(schema_name, fn_name):
    d = _ops.opdef(schema_name)
    invoke = _ops.invoke
    getframe = sys._getframe
    needs_site = d.random_state or d.random_seed

    if needs_site:
        def fn(*inputs, batch_size=None, device=None, rng=None, **kwargs):
            # the caller's frame identifies the call site for pipeline-compat seeding
            return invoke(d, inputs, kwargs, batch_size, device, rng, getframe(1))
    else:
        def fn(*inputs, batch_size=None, device=None, **kwargs):
            return invoke(d, inputs, kwargs, batch_size, device)

    fn.__name__ = fn.__qualname__ = fn_name
    fn.__doc__ = f"DALI operator `{schema_name}` (dynamic-mode call, dali_migrate runtime)."
    fn._schema_name = schema_name
    return fn


def submodule(root, path):
    mod = root
    for part in path:
        child = getattr(mod, part, None)
        if child is None:
            name = f"{mod.__name__}.{part}"
            child = sys.modules.get(name) or types.ModuleType(name)
            sys.modules[name] = child
            setattr(mod, part, child)
        mod = child
    return mod


def build(root):
    """Populate package `root` with every exposed operator. Returns {schema name: object}."""
    from . import _readers

    built = {}
    aliases = {}
    for name in _be.all_schema_names():
        if not exposed(name):
            continue
        original, target = _be.schema_and_target(name)
        if _be.alias_for(original):
            aliases[name] = target.Name()
            continue
        path = list(original.ModulePath())
        mod = submodule(root, path)
        if is_reader(original):
            obj = _readers.make_reader_class(name, mod.__name__)
            setattr(mod, original.OperatorName(), obj)
        else:
            d = _ops.opdef(name)
            if d.stateful and not d.random_state:
                continue  # like ndd: stateful non-random ops only exist as classes
            obj = make_function(name, _to_snake_case(original.OperatorName()))
            obj.__module__ = mod.__name__
            setattr(mod, obj.__name__, obj)
        built[name] = obj
    for alias, target in aliases.items():
        obj = built.get(target)
        if obj is None:
            continue
        s = _be.get_schema(alias)
        mod = submodule(root, list(s.ModulePath()))
        attr = s.OperatorName() if isinstance(obj, type) else _to_snake_case(s.OperatorName())
        if not hasattr(mod, attr):
            setattr(mod, attr, obj)
    return built


__all__ = ["build", "exposed", "_seeds"]
