"""Run an original pipeline and its converted code on the same data and compare every output.

The converted side runs on dali_migrate.runtime in pipeline-compatible random mode: each random
call site of the converted code gets the seed the built original pipeline gave the operator it
came from. Operators are matched in order, per operator: the k-th random operator X created by
the original function is the k-th call of X in the converted function's text (the codemod keeps
the order of operator calls).

Needs DALI and numpy; imported only by ``dali-migrate verify`` and ``dali_migrate.testing``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import math
import os
import sys
import tempfile
from pathlib import Path
from typing import Optional

import libcst as cst
import numpy as np
from libcst.metadata import MetadataWrapper, PositionProvider

from dali_migrate.catalog import load as load_catalog
from dali_migrate.cst_util import dotted
from dali_migrate.dali_imports import collect
from dali_migrate.device_cpu import to_cpu
from dali_migrate.engine import convert_source
from dali_migrate.pipeline_analysis import pipeline_decorator
from dali_migrate.verify.compare import Mismatch, compare_iteration
from dali_migrate.verify.slicing import SliceError, slice_source

DEFAULT_SEED = 1234


class VerifyError(Exception):
    """The check could not run (import, build or run failure, bad arguments): exit status 2."""


@dataclasses.dataclass
class Options:
    original: Path
    name: Optional[str] = None
    against: Optional[Path] = None
    iterations: Optional[int] = None
    batch_size: Optional[int] = None
    seed: Optional[int] = None
    device: str = "cpu"
    params: dict = dataclasses.field(default_factory=dict)
    args: tuple = ()  # positional arguments of the pipeline function, for both sides
    rtol: float = 0.0
    atol: float = 0.0
    num_threads: Optional[int] = None


@dataclasses.dataclass
class Verdict:
    equal: bool
    iterations: int
    outputs: int
    mismatch: Optional[Mismatch] = None
    notes: list = dataclasses.field(default_factory=list)

    def describe(self) -> str:
        if self.equal:
            text = f"equivalent: {self.outputs} output(s) equal over {self.iterations} iteration(s)"
        else:
            text = f"NOT equivalent: {self.mismatch.describe()}"
        return "\n".join([text, *self.notes])


# -- sources -----------------------------------------------------------------------------------


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise VerifyError(f"{path}: cannot read: {e}") from None


def _pipeline_names(source: str) -> list:
    module = cst.parse_module(source)
    names = collect(module)
    return [s.name.value for s in module.body if isinstance(s, cst.FunctionDef) and pipeline_decorator(s, names)]


def _pick_name(source: str, path: Path, name: Optional[str]) -> str:
    if name:
        return name
    found = _pipeline_names(source)
    if len(found) != 1:
        listing = ", ".join(found) if found else "none"
        raise VerifyError(f"{path}: name the pipeline to verify as {path}::NAME (@pipeline_def functions found: {listing})")
    return found[0]


def _is_pipeline_def(source: str, name: str) -> bool:
    """True for a @pipeline_def function (it takes the pipeline settings as keyword arguments);
    False for a Pipeline subclass or a function that returns a pipeline (settings are theirs)."""
    module = cst.parse_module(source)
    names = collect(module)
    for s in module.body:
        if isinstance(s, cst.FunctionDef) and s.name.value == name:
            return pipeline_decorator(s, names) is not None
    return False


def _prepare(text: str, path: Path, name: str, device: str) -> str:
    """What of ``text`` runs: moved to the CPU for ``--device cpu``, cut to ``name``'s needs."""
    if device == "cpu":
        text = to_cpu(text)
    try:
        return slice_source(text, [name])
    except SliceError as e:
        raise VerifyError(f"{path}: {e}") from None


def _sources(opts: Options):
    text = _read(opts.original)
    try:
        cst.parse_module(text)
    except cst.ParserSyntaxError as e:
        raise VerifyError(f"{opts.original}:{e.raw_line}: does not parse: {e.message}") from None
    name = _pick_name(text, opts.original, opts.name)
    original = _prepare(text, opts.original, name, opts.device)
    if opts.against is not None:
        converted = _prepare(_read(opts.against), opts.against, name, opts.device)
    else:
        result = convert_source(original, path=str(opts.original))
        if result.markers:
            reasons = "; ".join(f"line {mk.line}: {mk.reason}" for mk in result.markers)
            raise VerifyError(f"{opts.original}::{name} is not converted automatically ({reasons})")
        converted = result.output
    return name, original, converted


# -- loading -----------------------------------------------------------------------------------


def _load_module(text: str, label: str, directory: Path, tmp: Path):
    path = tmp / f"{label}.py"
    path.write_text(text, encoding="utf-8")
    mod_name = f"_dali_migrate_verify_{label}_{os.getpid()}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    module = importlib.util.module_from_spec(spec)
    # The user's own helper modules sit beside the file.
    sys.path.insert(0, str(directory))
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        raise VerifyError(f"cannot import the {label} code: {type(e).__name__}: {e}") from None
    finally:
        sys.path.remove(str(directory))
    return module, path


# -- the original side ------------------------------------------------------------------------


@contextlib.contextmanager
def _recording_sites(path: Path, records: list):
    """Note where, in the original file, each DALI operator instance is created."""
    import nvidia.dali.ops as ops

    original_init = ops._OperatorInstance.__init__
    target = str(path)

    def init(self, inputs, arg_inputs, arguments, _processed_arguments, op):
        frame = sys._getframe(1)
        line = None
        while frame is not None:
            if frame.f_code.co_filename == target:
                line = frame.f_lineno
                break
            frame = frame.f_back
        explicit = op._init_args.get("seed", arguments.get("seed"))
        records.append((self, type(op).__name__, line, explicit))
        original_init(self, inputs, arg_inputs, arguments, _processed_arguments, op)

    ops._OperatorInstance.__init__ = init
    try:
        yield
    finally:
        ops._OperatorInstance.__init__ = original_init


def _settings(opts: Options, seed: int) -> dict:
    # The thread count changes no output; a pipeline needs one, and many leave it to the caller.
    kw = {"seed": seed, "num_threads": opts.num_threads or 2}
    if opts.batch_size is not None:
        kw["batch_size"] = opts.batch_size
    if opts.device == "cpu":
        kw["device_id"] = None
    return kw


def _build_original(module, name: str, path: Path, opts: Options, settings: dict):
    records: list = []
    target = getattr(module, name)
    with _recording_sites(path, records):
        try:
            pipe = target(*opts.args, **opts.params, **settings)
        except Exception as e:
            raise VerifyError(f"cannot build the original pipeline: {type(e).__name__}: {e}") from None
        if not (hasattr(pipe, "build") and hasattr(pipe, "run")):
            raise VerifyError(f"{name}(...) returned {type(pipe).__name__}, not a DALI Pipeline")
        try:
            pipe.build()
        except Exception as e:
            raise VerifyError(f"cannot build the original pipeline: {type(e).__name__}: {e}") from None
    return pipe, records


def _original_seeds(pipe, records: list, seed: int) -> list:
    """[(canonical schema, line, seed)] for every seeded operator, in creation order."""
    from dali_migrate.runtime._seeds import pipeline_seeds

    catalog = _canonical_schemas()
    by_instance = {id(inst): (schema, line, explicit) for inst, schema, line, explicit in records}
    seeds = pipeline_seeds(seed)
    given = {}
    k = 0
    # Seeds are handed out in the order operators were added at build: pipe._ops.
    for inst in pipe._ops:
        if not inst._op._schema.HasRandomSeedArg():
            continue
        schema, line, explicit = by_instance.get(id(inst), (None, None, None))
        if explicit is not None:
            given[id(inst)] = int(explicit)
        else:
            given[id(inst)] = seeds[k]
            k += 1
    # Every seeded operator the function created, in creation order; one the pipeline pruned
    # (its output unused) got no seed (None) but still has its call in the converted code, so it
    # must keep its place when calls are matched in order.
    out = []
    for inst, schema_cls, line, explicit in records:
        if inst._op._schema.HasRandomSeedArg():
            name = inst._op._schema.Name()
            out.append((catalog.get(name, name), line, given.get(id(inst))))
    return out


def _canonical_schemas() -> dict:
    """schema name -> the schema of the operator the codemod emits for it (aliases resolved)."""
    cat = load_catalog()
    table = {}
    for op in cat.all():
        target = cat.fn(op.deprecated_alias_of) if op.deprecated_alias_of else op
        table[op.schema] = target.schema if target else op.schema
    return table


def _ndd_schemas() -> dict:
    cat = load_catalog()
    canonical = _canonical_schemas()
    table = {}
    for op in cat.all():
        if op.ndd_name and op.ndd_name not in table:
            table[op.ndd_name] = canonical.get(op.schema, op.schema)
    return table


# -- the converted side -----------------------------------------------------------------------


def _converted_sites(text: str, name: str, path: Path) -> list:
    """[(canonical schema, (file, line, col))] of the converted function's operator calls, in text order."""
    wrapper = MetadataWrapper(cst.parse_module(text))
    positions = wrapper.resolve(PositionProvider)
    module = wrapper.module
    ndd_aliases = {local for local, q in collect(module).aliases.items() if q == "nvidia.dali.experimental.dynamic"}
    ndd_aliases |= {"ndd"} if not ndd_aliases else set()
    table = _ndd_schemas()
    func = next((s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == name), None)
    if func is None:
        raise VerifyError(f"the converted code has no function {name}")
    found = []

    class _V(cst.CSTVisitor):
        def visit_Call(self, node):
            path_ = dotted(node.func)
            if not path_ or "." not in path_:
                return
            head, rest = path_.split(".", 1)
            if head in ndd_aliases and rest in table:
                pos = positions[node].start
                found.append((table[rest], (str(path), pos.line, pos.column)))

    func.visit(_V())
    return found


def _match_seeds(original: list, converted: list) -> tuple:
    site_seeds = {}
    notes = []
    queues: dict = {}
    for schema, line, seed in original:
        queues.setdefault(schema, []).append(seed)
    used: dict = {}
    for schema, site in converted:
        queue = queues.get(schema, [])
        i = used.get(schema, 0)
        if i < len(queue):
            if queue[i] is not None:  # None: pruned in the original, its value is never used
                site_seeds[site] = queue[i]
            used[schema] = i + 1
    for schema, queue in queues.items():
        if used.get(schema, 0) != len(queue):
            notes.append(f"note: the original has {len(queue)} seeded {schema} operator(s), the converted code {used.get(schema, 0)}")
    return site_seeds, notes


# -- outputs -----------------------------------------------------------------------------------


def _original_outputs(outs) -> list:
    result = []
    for tl in outs:
        device = "gpu" if type(tl).__name__.endswith("GPU") else "cpu"
        cpu = tl.as_cpu() if device == "gpu" else tl
        result.append((device, tl.layout(), [np.array(cpu.at(i)) for i in range(len(cpu))]))
    return result


def _converted_outputs(item) -> list:
    if not isinstance(item, tuple):
        item = (item,)
    result = []
    for b in item:
        device = getattr(b.device, "device_type", str(b.device)).split(":")[0]
        cpu = b.cpu() if device == "gpu" else b
        result.append((device, b.layout, [np.asarray(cpu.select(i)) for i in range(cpu.batch_size)]))
    return result


def _producers(pipe, records) -> list:
    lines = {id(inst): line for inst, _, line, _ in records}
    names = []
    for node in pipe._graph_outputs or []:
        src = getattr(node, "source", None)
        if src is None:
            names.append(None)
            continue
        line = lines.get(id(src))
        label = src._op._schema.Name() if hasattr(src, "_op") else str(src)
        names.append(f"{label} (line {line})" if line else label)
    return names


def _iterations(opts: Options, pipe) -> int:
    if opts.iterations is not None:
        if opts.iterations < 1:
            raise VerifyError("--iterations must be at least 1")
        return opts.iterations
    try:
        sizes = pipe.epoch_size()
    except Exception:
        sizes = {}
    if not sizes:
        return 3
    # One whole epoch of the longest reader, plus two iterations into the next.
    return max(math.ceil(size / pipe.max_batch_size) for size in sizes.values()) + 2


def verify(opts: Options) -> Verdict:
    if opts.device not in ("cpu", "gpu"):
        raise VerifyError(f"--device must be cpu or gpu, not {opts.device!r}")
    seed = DEFAULT_SEED if opts.seed is None else opts.seed
    name, original_text, converted_text = _sources(opts)
    if _is_pipeline_def(original_text, name):
        settings = _settings(opts, seed)
    else:
        # A Pipeline subclass or a function returning a pipeline fixes its own settings: they
        # come in through its parameters (--set), and the seed is read from the built pipeline.
        if opts.seed is not None or opts.batch_size is not None:
            raise VerifyError(
                f"{name} is not a @pipeline_def function: pass its batch size and seed as its own parameters (--set)"
            )
        settings = {}
    import dali_migrate.runtime as rt

    with tempfile.TemporaryDirectory(prefix="dali-migrate-verify-") as tmp:
        tmp = Path(tmp)
        directory = opts.original.resolve().parent
        original_mod, original_path = _load_module(original_text, "original", directory, tmp)
        pipe, records = _build_original(original_mod, name, original_path, opts, settings)
        if not settings:
            seed = pipe.seed
        n = _iterations(opts, pipe)
        if seed is None:
            if any(inst._op._schema.HasRandomSeedArg() for inst in pipe._ops):
                raise VerifyError(
                    f"{name} builds a pipeline without a fixed seed and with random operators or readers: "
                    "its random stream cannot be reproduced; give it a seed"
                )
            seed = DEFAULT_SEED
        seeded = _original_seeds(pipe, records, seed)
        producers = _producers(pipe, records)

        was_installed = rt.installed()
        rt.install()
        try:
            converted_mod, converted_path = _load_module(converted_text, "converted", directory, tmp)
            site_seeds, notes = _match_seeds(seeded, _converted_sites(converted_text, name, converted_path))
            with rt.pipeline_compat(seed=seed, site_seeds=site_seeds):
                try:
                    gen = getattr(converted_mod, name)(*opts.args, **opts.params, **settings)
                except Exception as e:
                    raise VerifyError(f"cannot start the converted code: {type(e).__name__}: {e}") from None
                for it in range(n):
                    try:
                        ref = _original_outputs(pipe.run())
                    except Exception as e:
                        raise VerifyError(f"the original pipeline failed at iteration {it}: {type(e).__name__}: {e}") from None
                    try:
                        got = _converted_outputs(next(gen))
                    except Exception as e:
                        raise VerifyError(f"the converted code failed at iteration {it}: {type(e).__name__}: {e}") from None
                    mismatch = compare_iteration(it, ref, got, opts.rtol, opts.atol, producers)
                    if mismatch is not None:
                        return Verdict(False, it + 1, len(ref), mismatch, notes)
        finally:
            if not was_installed:
                rt.uninstall()
    return Verdict(True, n, len(ref), None, notes)
