#!/usr/bin/env python
"""Generate dali_migrate/data/catalog.json from the installed DALI's own registries.

Every fact comes from DALI (C++ schema registry, the ``fn``/``ops`` modules it generates, and
the dynamic-mode module it builds), so regenerating against a new DALI updates the catalog
with no hand-kept tables.  Run ``--check`` in CI to catch a stale committed file.

    python scripts/generate_catalog.py [--output PATH] [--check]
"""

from __future__ import annotations

import argparse
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
    # Output count is a fixed number unless an output function computes it from arguments.
    # Python-defined ops (python_function, readers.tfrecord) set it from arguments in Python
    # and report 0 here, which is not a real count.
    num_outputs = None if target.HasOutputFn() else target.CalculateOutputs(b.OpSpec(target.Name()))
    num_outputs = num_outputs or None
    return {
        # Non-hidden arguments: what fn documents and users write.  Hidden base arguments
        # (device, name, seed on non-random ops, num_threads...) are handled by the codemod.
        "args": sorted(target.GetArgumentNames()),
        "min_inputs": target.MinNumInput(),
        "max_inputs": target.MaxNumInput(),
        "num_outputs": num_outputs,
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
        keys = ("args", "min_inputs", "max_inputs", "num_outputs")
        return all(f_old[k] == f_new[k] for k in keys)

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
