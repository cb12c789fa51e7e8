#!/usr/bin/env python
"""Generate dali_migrate/data/catalog.json from the installed DALI's own registries.

Every fact comes from DALI (C++ schema registry, the ``fn``/``ops`` modules it generates, and
the dynamic-mode module it builds), so regenerating against a new DALI updates the catalog
with no hand-kept tables.  Run ``--check`` in CI to catch a stale committed file.

    python scripts/generate_catalog.py [--output PATH] [--check]
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import sys
import types
from pathlib import Path

DEFAULT_OUTPUT = Path(__file__).resolve().parent.parent / "dali_migrate" / "data" / "catalog.json"
GENERATED_BY = "python scripts/generate_catalog.py"


def _fn_paths(fn_module) -> dict[str, str]:
    """fn path -> schema name for every operator function ``nvidia.dali.fn`` exposes.

    The ``hidden`` submodules are skipped: DALI places doc-hidden ops there *and* re-exports
    them one level up (``fn.hidden.file_reader`` is ``fn.file_reader``), and user code uses
    the latter.  Underscore names (``_conditional.merge``, ``_shape``) are kept because fn
    exposes them and AutoGraph-converted code can call them.
    """
    out: dict[str, str] = {}

    def walk(mod, prefix):
        for name in sorted(vars(mod)):
            if name.startswith("__") or name == "hidden":
                continue
            obj = vars(mod)[name]
            if isinstance(obj, types.ModuleType):
                # Only real submodules of fn; skips re-exported helpers like fn's own imports.
                if obj.__name__.startswith(fn_module.__name__ + "."):
                    walk(obj, f"{prefix}{name}.")
            elif callable(obj) and hasattr(obj, "_schema_name"):
                out[prefix + name] = obj._schema_name

    walk(fn_module, "")
    return out


def _resolve(root, dotted: str):
    obj = root
    for part in dotted.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _ndd_path(ndd, names, b, schema_name: str) -> str | None:
    """Where dynamic mode exposes this schema, verified by resolving the object and comparing
    the schema name it carries (ndd op functions/classes have ``_schema_name``).

    The candidate path comes from DALI's own naming helper (readers stay PascalCase classes
    in ndd, everything else is snake_case), so we never guess names; an alias resolves to its
    target's class, hence the target's name is accepted too.
    """
    path = names._op_name(schema_name, api="dynamic")
    obj = _resolve(ndd, path)
    accepted = {s.Name() for s in b.GetSchemaAndTarget(schema_name) if s is not None}
    if obj is not None and getattr(obj, "_schema_name", None) in accepted:
        return path
    return None


_STRINGS = ("STRING", "TENSOR_LAYOUT")
_PY_TYPES = {"BOOL": bool, "INT": int, "UINT": int, "FLOAT": float, "STRING": str}


def _probe_values(type_name: str) -> list:
    """Ordinary values of an argument's type (an enum gets none: only the wrong-type probe)."""
    if type_name == "BOOL":
        return [True, False]
    if type_name.endswith("_VEC"):
        item = {"_BOOL_VEC": True, "_FLOAT_VEC": 1.0, "_STRING_VEC": "a"}.get(type_name, 1)
        return [[], [item], [item] * 3]
    if type_name in _STRINGS:
        return ["", "a"]
    if type_name.startswith("FLOAT"):
        return [0.0, 1.0, 2.5]
    if type_name.startswith(("INT", "UINT")):
        return [0, 1, 2, 3, 5]
    return []


def _output_counts(b, schema) -> tuple:
    """(fixed count or None, count when no argument below is given or None, {argument: default literal}).

    DALI counts a call's outputs as CalculateOutputs + CalculateAdditionalOutputs of its OpSpec
    (ops/__init__.py, _generate_outputs); both are C++ functions of the spec, so which arguments
    they use is found by asking them: an argument set to a value of the wrong type makes DALI raise
    when the function reads it, and ordinary values catch functions that only check presence.
    The default count is kept only when it is the same for every number of inputs the operator
    takes (bbox_rotate's follows its inputs). A default literal is kept only when passing it
    explicitly still gives the default count (video readers count file_root="" as given).
    """
    def count(args=(), inputs=None) -> int:
        spec = b.OpSpec(schema.Name())
        for i in range(schema.MinNumInput() if inputs is None else inputs):
            spec.AddInput(f"in{i}", "cpu")
        for name, value in args:
            spec.AddArg(name, value)
        return schema.CalculateOutputs(spec) + schema.CalculateAdditionalOutputs(spec)

    try:
        default = count()
        lo, hi = schema.MinNumInput(), schema.MaxNumInput()
        per_inputs = {count(inputs=k) for k in range(lo, min(hi, lo + 4) + 1)}
    # pybind11 turns DALI's C++ errors into several Python types, hence the broad excepts here.
    except Exception:  # noqa: BLE001 - an argument without a default is needed (element_extract)
        return None, None, {}
    depends = {}
    for name in schema.GetArgumentNames(True):
        type_name = str(schema.GetArgumentType(name)).rsplit(".", 1)[-1]
        wrong = 12345 if type_name in _STRINGS or type_name == "_STRING_VEC" else "not-a-value"
        try:
            changes = count([(name, wrong)]) != default
        except Exception:  # noqa: BLE001 - DALI read it and refused the type
            changes = True
        for value in _probe_values(type_name):
            try:
                changes = changes or count([(name, value)]) != default
            except Exception:  # noqa: BLE001
                pass  # a value the argument refuses is not one a working call passes
        if changes:
            depends[name] = _default_literal(schema, name, type_name, lambda v, n=name: count([(n, v)]) == default)
    # Python-defined ops (python_function, readers.tfrecord) set the count from arguments in
    # Python and report 0 here, which is not a real count.
    default = default if default and len(per_inputs) == 1 else None
    fixed = default if not (schema.HasOutputFn() or depends) else None
    return fixed, default, depends


def _default_literal(schema, name: str, type_name: str, keeps_default):
    """The argument's default as the literal a call would write (None: there is no such literal)."""
    if not schema.HasArgumentDefaultValue(name):
        return None
    try:
        value = ast.literal_eval(schema.GetArgumentDefaultValueString(name))
    except (ValueError, SyntaxError):
        return None
    py_type = next((t for prefix, t in _PY_TYPES.items() if type_name.startswith(prefix)), None)
    if py_type is None or type(value) is not py_type:
        return None
    try:
        return value if keeps_default(value) else None
    except Exception:  # noqa: BLE001
        return None


def _loader_args(b, target) -> list:
    """The arguments ``target`` (a reader's schema) takes from DALI's common reader schema
    ``LoaderBase`` (random_shuffle, initial_fill, shard_id, ...): the schema registry does not
    say which schemas a schema inherits, so an argument counts where the reader has it with
    LoaderBase's own documentation and default (a reader that redefines one has its own)."""
    base = b.GetSchema("LoaderBase")
    return sorted(
        name for name in base.GetArgumentNames()
        if target.HasArgument(name) and target.GetArgumentDox(name) == base.GetArgumentDox(name)
        and _default(target, name) == _default(base, name))


def _default(schema, name) -> tuple:
    """(whether the argument has a default, that default as DALI prints it)."""
    has = schema.HasArgumentDefaultValue(name)
    return has, schema.GetArgumentDefaultValueString(name) if has else None


def _defaults(schema) -> dict:
    """{argument: :func:`_default`}: a rename keeps the arguments a call leaves out only where both
    schemas default them alike (fast_resize_crop_mirror defaults antialias to False,
    resize_crop_mirror to True)."""
    return {name: _default(schema, name) for name in schema.GetArgumentNames()}


def _facts(b, registry, schema_name: str) -> dict:
    """Schema facts.  Alias schemas (FileReader -> readers__File) report 0 inputs and no
    arguments of their own, so inputs/args/outputs are read from the alias target."""
    own = b.GetSchema(schema_name)
    target = b.GetSchema(own.AliasFor()) if own.AliasFor() else own
    # Python-defined ops (python_function, readers.tfrecord) have empty backend sets in the
    # schema; they register their devices in the Python-side registry instead.
    devices = set(target.GetSupportedBackends()) | set(own.GetSupportedBackends())
    for dev, names in (("cpu", registry.cpu_ops()), ("gpu", registry.gpu_ops()),
                       ("mixed", registry.mixed_ops())):
        if schema_name in names:
            devices.add(dev)
    num_outputs, default_num_outputs, num_outputs_args = _output_counts(b, target)
    return {
        # Non-hidden arguments: what fn documents and users write.  Hidden base arguments
        # (device, name, seed on non-random ops, num_threads...) are handled by the codemod.
        "args": sorted(target.GetArgumentNames()),
        "min_inputs": target.MinNumInput(),
        "max_inputs": target.MaxNumInput(),
        "num_outputs": num_outputs,
        "default_num_outputs": default_num_outputs,
        "num_outputs_args": num_outputs_args,
        "devices": sorted(devices),
        "deprecated": bool(own.IsDeprecated()),
        # HasRandomStateArg is the test ndd itself uses to add `rng=` (see _op_builder);
        # HasArgument("seed") is useless here since every schema inherits "seed".
        "is_random": bool(target.HasRandomStateArg()),
        "takes_seed": bool(target.HasRandomSeedArg()),
        "_schema": target,
        "_own": own,
    }


def build_catalog() -> dict:
    import nvidia.dali as dali
    import nvidia.dali.backend as b
    import nvidia.dali.fn as fn
    import nvidia.dali.ops as ops
    import nvidia.dali.experimental.dynamic as ndd
    from nvidia.dali.ops import _names, _registry

    fn_map = _fn_paths(fn)
    schema_to_fn: dict[str, str] = {}
    for path, schema in sorted(fn_map.items()):
        schema_to_fn.setdefault(schema, path)

    facts = {s: _facts(b, _registry, s) for s in set(fn_map.values())}

    def drop_in(old: str, new: str) -> bool:
        # A deprecated schema is a safe rename target only when DALI declares it an alias or
        # its replacement accepts the same arguments, inputs and outputs (experimental.equalize
        # -> equalize yes; ssd_random_crop -> random_bbox_crop no).
        if b.GetSchema(old).AliasFor() == new:
            return True
        f_old, f_new = facts[old], facts.get(new) or _facts(b, _registry, new)
        keys = ("args", "min_inputs", "max_inputs", "num_outputs", "default_num_outputs", "num_outputs_args")
        return all(f_old[k] == f_new[k] for k in keys) and _defaults(f_old["_schema"]) == _defaults(f_new["_schema"])

    entries = {}
    for fn_name, schema_name in sorted(fn_map.items()):
        f = facts[schema_name]
        own, target = f["_own"], f["_schema"]
        replacement = own.DeprecatedInFavorOf() if own.IsDeprecated() else ""
        replaced_by = schema_to_fn.get(replacement) if replacement else None
        is_alias = bool(replaced_by) and drop_in(schema_name, replacement)

        ndd_name = _ndd_path(ndd, _names, b, schema_name)
        if is_alias:
            # Prefer the replacement even when ndd still carries the deprecated name
            # (ndd keeps experimental.decoders.image, deprecated in 2.2).
            ndd_name = _ndd_path(ndd, _names, b, replacement) or ndd_name

        # readers__* schemas, plus deprecated FooReader schemas that point to one.
        reader_schema = next(
            (b.GetSchema(s) for s in (target.Name(), replacement)
             if s and "readers" in b.GetSchema(s).ModulePath()),
            None,
        )
        ops_name = _names._op_name(schema_name, api="ops")
        ops_cls = _resolve(ops, ops_name)
        # _schema_name falls back to the class name (ops.ExternalSource has no schema_name).
        if ops_cls is None or _names._schema_name(ops_cls) != schema_name:
            ops_cls = None  # e.g. fn-only Python wrappers; report as missing rather than lie

        entries[fn_name] = {
            "schema": schema_name,
            "ops_name": ops_name if ops_cls is not None else None,
            "ndd_name": ndd_name,
            "is_reader": reader_schema is not None,
            "reader_class": reader_schema.OperatorName() if reader_schema is not None else None,
            "deprecated_alias_of": replaced_by if is_alias else None,
            "replaced_by": replaced_by,
            "moved_from_experimental": fn_name.startswith("experimental.")
            and ndd_name is not None
            and not ndd_name.startswith("experimental."),
            **{k: v for k, v in f.items() if not k.startswith("_")},
        }
        if entries[fn_name]["is_reader"]:
            # Readers take a seed for shuffling but are not per-call random ops in ndd.
            entries[fn_name]["is_random"] = False
            entries[fn_name]["loader_args"] = _loader_args(b, reader_schema)

    return {
        "dali_version": dali.__version__,
        "generated_by": GENERATED_BY,
        "ops": entries,
    }


def render(catalog: dict) -> str:
    # indent=1 with sorted keys: deterministic and reviewable line-by-line in diffs.
    return json.dumps(catalog, indent=1, sort_keys=True) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if the file at --output differs from what DALI gives")
    args = parser.parse_args(argv)

    text = render(build_catalog())
    if args.check:
        current = args.output.read_text() if args.output.exists() else ""
        if current == text:
            print(f"{args.output}: up to date")
            return 0
        diff = list(difflib.unified_diff(current.splitlines(), text.splitlines(),
                                         "committed", "installed DALI", lineterm="", n=1))
        changed = sum(1 for d in diff if d[:1] in "+-" and d[:3] not in ("+++", "---"))
        print(f"{args.output}: stale ({changed} changed lines); regenerate with: {GENERATED_BY}")
        print("\n".join(diff[:60]))
        return 1
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    print(f"wrote {args.output} ({len(json.loads(text)['ops'])} operators)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
