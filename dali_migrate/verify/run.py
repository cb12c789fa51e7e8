"""Run an original pipeline and its converted code on the same data and compare every output.

The converted side runs on dali_migrate.runtime in pipeline-compatible random mode: each random
call site of the converted code gets the seed the built original pipeline gave the operator it
came from. Operators are matched in order, per operator kind, among those that actually ran: the
k-th random operator X the original function created is the k-th call site of X the converted
code ran (the codemod keeps the order of operator calls). An operator in a branch the pipeline
did not take was never created, and its converted call never runs, so it takes no one's seed.
Where the order cannot be trusted (see _RunOrderSeeds.unmatched), a difference is reported as
not checked rather than as a difference.

Needs DALI and numpy; imported only by ``dali-migrate verify`` and ``dali_migrate.testing``.
"""

from __future__ import annotations

import contextlib
import copy
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

from dali_migrate.catalog import load as load_catalog
from dali_migrate.dali_imports import collect
from dali_migrate.device_cpu import to_cpu
from dali_migrate.engine import convert_source
from dali_migrate.pipeline_analysis import pipeline_decorator
from dali_migrate.runtime import _seeds
from dali_migrate.runtime._seeds import PipelineCompat, pipeline_seeds, site_description, site_key
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


def _prepare(text: str, path: Path, name: str, device: str, positional_device_id: bool = True) -> str:
    """What of ``text`` runs: moved to the CPU for ``--device cpu``, cut to ``name``'s needs."""
    if device == "cpu":
        text = to_cpu(text, positional_device_id)
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
    # Pipeline's positional device_id as written, for now: the codemod reads there that a class
    # passes its own parameter on (super().__init__(bs, threads, device_id))
    original = _prepare(text, opts.original, name, opts.device, positional_device_id=False)
    if opts.against is not None:
        converted = _prepare(_read(opts.against), opts.against, name, opts.device)
    else:
        result = convert_source(original, path=str(opts.original))
        if result.markers:
            reasons = "; ".join(f"line {mk.line}: {mk.reason}" for mk in result.markers)
            raise VerifyError(f"{opts.original}::{name} is not converted automatically ({reasons})")
        converted = to_cpu(result.output) if opts.device == "cpu" else result.output
    if opts.device == "cpu":
        original = to_cpu(original)  # (now that positional device_id too)
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
    # A module-level `args = parser.parse_args()` the pipeline reads parses the file's own command
    # line, empty here (its defaults), not verify's options
    argv, sys.argv = sys.argv, [str(path)]
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        raise VerifyError(f"cannot import the {label} code: {type(e).__name__}: {e}") from None
    except SystemExit as e:  # argparse on a required option, sys.exit() at import
        raise VerifyError(f"cannot import the {label} code: it exited ({e.code}) while importing "
                          "(a command line it parses at module level? only its defaults are given)") from None
    finally:
        sys.argv = argv
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


def _cannot_build(e: Exception, opts: Options) -> str:
    why = f"cannot build the original pipeline: {type(e).__name__}: {e}"
    if opts.batch_size is None and "batch size must be set" in str(e).lower():
        # (its callers give it one, which verify does not see: it runs the pipeline alone)
        why += " The pipeline sets no batch size of its own: give one with --batch-size N."
    return why


def _build_original(module, name: str, path: Path, opts: Options, settings: dict):
    records: list = []
    target = getattr(module, name)
    with _recording_sites(path, records):
        try:
            pipe = target(*opts.args, **opts.params, **settings)
        except Exception as e:
            raise VerifyError(_cannot_build(e, opts)) from None
        if not (hasattr(pipe, "build") and hasattr(pipe, "run")):
            raise VerifyError(f"{name}(...) returned {type(pipe).__name__}, not a DALI Pipeline")
        try:
            pipe.build()
        except Exception as e:
            raise VerifyError(_cannot_build(e, opts)) from None
    return pipe, records


def _fed_inputs(pipe) -> str:
    """The external sources of the built pipeline that have no source of their own, named; none
    where the pipeline feeds them itself (a class's iter_setup)."""
    from nvidia.dali.pipeline import Pipeline

    if getattr(type(pipe), "iter_setup", None) is not Pipeline.iter_setup:
        return ""
    names = []
    for inst in pipe._ops:
        if inst._op._schema.Name() == "ExternalSource" and getattr(inst._op, "_callback", True) is None:
            names.append(repr(inst._op._name) if getattr(inst._op, "_name", None) else "unnamed")
    return ", ".join(names)


def _draws(inst) -> bool:
    """Whether the operator's output depends on its seed: a random operator, or a reader that
    shuffles (a reader reading in order takes a seed it never uses)."""
    schema = inst._op._schema
    if not schema.HasRandomSeedArg():
        return False
    if not (schema.Name().startswith("readers__") or schema.Name().endswith("Reader")):  # (FileReader: 1.x name)
        return True
    args = getattr(inst._op, "_init_args", None)
    if args is None:  # (cannot tell: take it for shuffling)
        return True
    return bool(args.get("random_shuffle")) or bool(args.get("shuffle_after_epoch"))


def _original_seeds(pipe, records: list, seed: int) -> list:
    """[(canonical schema, line, seed)] for every seeded operator, in creation order."""
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
    # (its output unused) got no seed (None) but its call still runs in the converted code, so it
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


# -- the converted side -----------------------------------------------------------------------


@dataclasses.dataclass
class _Site:
    schema: str
    where: tuple  # (file, line, col) in the converted code
    iteration: int  # the iteration it first ran in
    original: Optional[tuple]  # (line in the original, seed) of the operator whose place it took


class _RunOrderSeeds(PipelineCompat):
    """Pipeline-compatible session that gives each random call site of the converted code, when
    it first runs, the seed of the original's next operator of the same kind, in creation order.

    Both sides count what ran: the original's operators are the instances its Python code created
    (a branch it did not take created none), the converted code's call sites the calls it made (a
    branch it did not take makes none), so no text order is assumed. Readers take the mapped
    seed over their seed= (the codemod passes the pipeline's seed where the pipeline derived one);
    an operator call with its own seed= keeps it but still takes its place.
    """

    def __init__(self, seed, original: list, canonical: dict):
        super().__init__(seed)
        self.iteration = 0
        self._original = original
        self._canonical = canonical
        self.sites: dict = {}  # runtime site key -> _Site, in first-run order

    def _of_kind(self, schema) -> list:
        return [(line, s) for sch, line, s in self._original if sch == schema]

    def _match(self, frame, schema) -> _Site:
        key = site_key(frame)
        with self.lock:
            site = self.sites.get(key)
            if site is None:
                schema = self._canonical.get(schema, schema)
                k = sum(1 for s in self.sites.values() if s.schema == schema)
                originals = self._of_kind(schema)
                original = originals[k] if k < len(originals) else None
                site = self.sites[key] = _Site(schema, site_description(frame), self.iteration, original)
        return site

    def mapped(self, frame, schema=None):
        site = self._match(frame, schema)
        return site.original[1] if site.original is not None else None

    def brought_seed(self, frame, schema):
        self._match(frame, schema)

    def seed_for(self, frame, schema=None):
        site = self._match(frame, schema)
        if site.original is not None and site.original[1] is not None:
            return site.original[1]
        # No seed of the original's to take (an operator it pruned, or one it does not have):
        # any seed will do, the pipeline's next one as in plain pipeline-compatible mode.
        return super().seed_for(frame)

    def _ran(self) -> dict:
        kinds: dict = {}
        for site in self.sites.values():
            kinds.setdefault(site.schema, []).append(site)
        return kinds

    def unmatched(self) -> list:
        """Why the calls of some operator kind may have taken the seeds of the wrong operators.

        Certain: a kind that ran as many call sites as the original created operators, all in the
        first iteration (the codemod keeps the order of operator calls), or one the original does
        not have (no seed of its to give). Otherwise (a helper or a loop that makes several
        operators from one call site, a call missing or added, a call that first ran later,
        inside a branch on data) the pairing is a guess.
        """
        reasons = []
        for schema, sites in self._ran().items():
            originals = self._of_kind(schema)
            n = len(originals)
            if n == 0:
                continue
            lines = ", ".join(str(line) for line, _ in originals)
            calls = ", ".join(_where(s) for s in sites)
            if len(sites) != n:
                reasons.append(
                    f"the original created {n} {schema} operator(s) (line(s) {lines} of the original), "
                    f"the converted code ran {len(sites)} call site(s) of it ({calls} of the converted code)"
                )
            elif n > 1 and any(s.iteration > 0 for s in sites):
                late = next(s for s in sites if s.iteration > 0)
                reasons.append(
                    f"the {schema} call at {_where(late)} of the converted code first ran in iteration "
                    f"{late.iteration}, so its place among the original's {n} (line(s) {lines}) is not known"
                )
        return reasons

    def notes(self) -> list:
        ran = {schema: len(sites) for schema, sites in self._ran().items()}
        counts: dict = {}
        for schema, _, _ in self._original:
            counts[schema] = counts.get(schema, 0) + 1
        for schema in ran:
            counts.setdefault(schema, 0)
        return [
            f"note: the original has {n} seeded {schema} operator(s), the converted code ran {ran.get(schema, 0)} call site(s) of it"
            for schema, n in counts.items()
            if ran.get(schema, 0) != n
        ]


def _where(site: _Site) -> str:
    file, line, _ = site.where
    # The converted code is loaded from a temporary converted.py; a helper module keeps its name.
    return f"line {line}" if Path(file).name == "converted.py" else f"{file}:{line}"


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
    # Each side gets its own copy of what the caller passes: one iterator object given to both
    # would have the converted side start where the original's batches left it
    try:
        own_args, own_params = copy.deepcopy((tuple(opts.args), dict(opts.params)))
    except Exception:  # noqa: BLE001 - (an open file, a lock): both sides share it, as documented
        own_args, own_params = opts.args, opts.params
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
        original_random = _GlobalRandom()
        converted_random = original_random.copy()
        with original_random.active():
            original_mod, original_path = _load_module(original_text, "original", directory, tmp)
            pipe, records = _build_original(original_mod, name, original_path, opts, settings)
        fed = _fed_inputs(pipe)
        if fed:
            # (pipe.run() would wait for them forever where blocking=True, or fail)
            raise VerifyError(
                f"{name} reads input fed from outside ({fed}: fn.external_source without source=, given "
                "by pipe.feed_input or run(name=...)): verify runs the pipeline on its own and has "
                "nothing to feed it; compare the original and the converted function on your data by hand"
            )
        if not settings:
            seed = pipe.seed
        n = _iterations(opts, pipe)
        if seed is None:
            if any(_draws(inst) for inst in pipe._ops):
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
            with converted_random.active():
                converted_mod, _ = _load_module(converted_text, "converted", directory, tmp)
            session = _RunOrderSeeds(seed, seeded, _canonical_schemas())
            with _compat_session(session):
                gen = None
                outputs = 0
                for it in range(n):
                    try:
                        with original_random.active():
                            ref = _original_outputs(pipe.run())
                    except StopIteration:
                        # A source that runs out ends the epoch (DALI raises StopIteration from run()):
                        # the converted generator must end at the same iteration, which is compared too
                        if gen is None:
                            raise VerifyError(
                                f"the original pipeline ended (its source raised StopIteration) before its first batch: nothing to compare"
                            ) from None
                        return _compare_end(gen, converted_random, it, outputs, session)
                    except Exception as e:
                        raise VerifyError(f"the original pipeline failed at iteration {it}: {type(e).__name__}: {e}") from None
                    outputs = len(ref)
                    if gen is None:
                        # Made after the original's first run, as a program of its own would make
                        # it: the converted code runs the pipeline's own code when it is made (like
                        # the pipeline did), and state both share (a file read) then meets the first
                        # batch as in the original; the global random generators are each side's own.
                        try:
                            with converted_random.active():
                                gen = getattr(converted_mod, name)(*own_args, **own_params, **settings)
                        except Exception as e:
                            raise VerifyError(f"cannot start the converted code: {type(e).__name__}: {e}") from None
                    session.iteration = it
                    try:
                        with converted_random.active():
                            batch = next(gen, _ENDED)
                        ended = _ended_how(batch)
                        if ended is not None:
                            return Verdict(False, it + 1, len(ref), Mismatch(
                                it, None, None, "end of data",
                                f"the converted code ended ({ended}) where the original pipeline gave a batch",
                            ), session.notes())
                        got = _converted_outputs(batch)
                    except Exception as e:
                        raise VerifyError(f"the converted code failed at iteration {it}: {type(e).__name__}: {e}") from None
                    mismatch = compare_iteration(it, ref, got, opts.rtol, opts.atol, producers)
                    if mismatch is not None:
                        unmatched = session.unmatched()
                        if unmatched:
                            # The seeds may be what differs, not the conversion: saying NOT
                            # equivalent would be a guess.
                            raise VerifyError(
                                "cannot match random operators of the original to the converted code's calls: "
                                + "; ".join(unmatched)
                                + f". The difference found ({mismatch.describe()}) may come from seeds given "
                                "to the wrong calls: not checked"
                            )
                        return Verdict(False, it + 1, len(ref), mismatch, session.notes())
        finally:
            if not was_installed:
                rt.uninstall()
    return Verdict(True, n, len(ref), None, session.notes())


_ENDED = object()


def _ended_how(batch) -> Optional[str]:
    """How the converted generator said the data ended, given what ``next(gen, _ENDED)`` gave, or
    None for a batch: it returns, or, where the pipeline object could be reset and run again, it
    yields None there (rules/external_source.END_COMMENT)."""
    if batch is _ENDED:
        return "its generator returned"
    return "it yielded None, the source's end" if batch is None else None


def _compare_end(gen, converted_random, it: int, outputs: int, session) -> Verdict:
    """The original ended at iteration ``it``: equal when the converted generator ends there too."""
    try:
        with converted_random.active():
            ended = _ended_how(next(gen, _ENDED))
        if ended is not None:
            return Verdict(True, it, outputs, None, session.notes() + [
                f"the original's source ended after {it} iteration(s) (StopIteration from run()); "
                f"the converted code ended there too ({ended})"
            ])
    except Exception as e:
        raise VerifyError(
            f"the converted code failed at iteration {it}, where the original ended (StopIteration): {type(e).__name__}: {e}"
        ) from None
    return Verdict(False, it + 1, outputs, Mismatch(
        it, None, None, "end of data",
        "the original pipeline ended (its source raised StopIteration) where the converted code gave another batch",
    ), session.notes())


class _GlobalRandom:
    """One side's own state of the process-wide generators (``random``, ``np.random``, torch's CPU
    generator where loaded). The two sides run in one process, iteration after iteration; a source
    drawing from ``np.random`` would otherwise take the other side's next numbers (the original
    also draws ahead, for its prefetch), where each program run alone would draw the same ones."""

    def __init__(self):
        self._capture()

    def _capture(self) -> None:
        import random

        self._random, self._np = random.getstate(), np.random.get_state()
        torch = sys.modules.get("torch")
        self._torch = torch.get_rng_state() if torch is not None and hasattr(torch, "get_rng_state") else None

    def copy(self) -> "_GlobalRandom":
        return copy.deepcopy(self)

    @contextlib.contextmanager
    def active(self):
        """The side's state in place while its code runs; what it drew is kept for its next turn."""
        saved = _GlobalRandom()
        self._apply()
        try:
            yield self
        finally:
            self._capture()
            saved._apply()

    def _apply(self) -> None:
        import random

        random.setstate(self._random)
        np.random.set_state(self._np)
        torch = sys.modules.get("torch")
        if self._torch is not None and torch is not None:
            torch.set_rng_state(self._torch)


@contextlib.contextmanager
def _compat_session(session):
    """rt.pipeline_compat with our own session (it makes a plain one)."""
    _seeds._global_stack.append(session)
    try:
        yield session
    finally:
        _seeds._global_stack.remove(session)
