"""Running the conversion over many files: one file -> FileResult, and many files in parallel."""

from __future__ import annotations

import ast
import concurrent.futures
import contextlib
import dataclasses
import difflib
import gc
import multiprocessing
import os
import signal
from pathlib import Path
from typing import Callable, Iterator, Optional, Sequence

import libcst

from dali_migrate import engine, notebooks, outside_users
from dali_migrate.config import Config
from dali_migrate.files import FileProblem, SourceFile, read_source, write_source
from dali_migrate.model import ConversionError, ConversionResult, Marker, Status

#: convert(source, *, path, config) -> ConversionResult, like engine.convert_source
Converter = Callable[..., ConversionResult]


@dataclasses.dataclass(frozen=True)
class Options:
    """Everything a worker needs; crosses process boundaries, so it must pickle."""

    config: Config = Config()
    write: bool = True
    diff: bool = False
    # None means engine.convert_source, looked up at call time (so it can be monkeypatched).
    # Anything else must be a module-level function for --jobs > 1.
    convert: Optional[Converter] = None
    # Where the project's other files are, which may import what a converted file defines (those
    # definitions then stay as they were: outside_users.py); None: no such check.
    project: Optional[outside_users.Scope] = outside_users.Scope()


@dataclasses.dataclass
class FileResult:
    """What happened to one file."""

    path: str
    status: Status
    markers: list[Marker] = dataclasses.field(default_factory=list)
    rewrites: int = 0
    pipelines_converted: int = 0
    pipelines_left: int = 0
    changed: bool = False  # the conversion changes the text (whether or not it was written)
    written: bool = False
    error: Optional[str] = None
    error_line: Optional[int] = None
    error_cell: Optional[int] = None  # notebooks: 1-based cell that error_line is in
    diff: Optional[str] = None

    @classmethod
    def failed(cls, path: str, reason: str, line: Optional[int] = None) -> "FileResult":
        return cls(path=path, status=Status.ERROR, error=reason, error_line=line)


def process_file(path: Path, options: Options = Options()) -> FileResult:
    """The one place that dispatches on the kind of file; never raises for a problem in the file."""
    try:
        if path.suffix == ".ipynb":
            return _process_notebook(path, options)
        return _process_python(path, options)
    except FileProblem as e:
        return FileResult.failed(str(path), str(e))
    except Exception as e:  # a bug of ours must cost one file, not the run
        return FileResult.failed(str(path), f"internal error: {type(e).__name__}: {e}")


def _process_notebook(path: Path, options: Options) -> FileResult:
    """Code cells converted as one module (see notebooks.py); markers and errors carry a cell."""
    src = read_source(path)
    if not engine.mentions_dali(src.text):
        return FileResult(path=str(path), status=Status.UNCHANGED)
    convert = options.convert or engine.convert_source
    try:
        result = notebooks.convert_notebook(
            src.text, path=str(path), config=options.config, convert=convert,
            mentions_dali=engine.mentions_dali,
        )
    except notebooks.NotebookError as e:
        out = FileResult.failed(str(path), e.message, e.line)
        out.error_cell = e.cell
        return out
    out = FileResult(
        path=str(path),
        status=result.status,
        markers=list(result.markers),
        rewrites=result.rewrites,
        pipelines_converted=result.pipelines_converted,
        pipelines_left=result.pipelines_left,
        changed=result.changed,
    )
    if not out.changed:
        return out
    if options.diff:
        out.diff = result.diff(str(path))
    if options.write:
        out.written = write_source(path, src, result.output)
    return out


def _process_python(path: Path, options: Options) -> FileResult:
    src = read_source(path)
    if not engine.mentions_dali(src.text):
        return FileResult(path=str(path), status=Status.UNCHANGED)
    convert = options.convert or engine.convert_source
    try:
        if options.project is None:
            result = convert(src.text, path=str(path), config=options.config)
        else:
            result = outside_users.convert(convert, src.text, path=path, config=options.config, scope=options.project)
    except ConversionError as e:
        message, line = e.message, e.line
        if message.startswith("does not parse"):
            message, line = _python_syntax_error(src.text, message, line)
        return FileResult.failed(str(path), message, line)
    return _finish(path, src, result, options)


def _python_syntax_error(text: str, message: str, line: Optional[int]) -> tuple:
    """Python's own account of a syntax error, when it has one: its line is the one a person
    expects (libcst can point past it, e.g. at the next line), and its message is clearer
    ("Missing parentheses in call to 'print'" for Python 2 code)."""
    try:
        compile(text, "<file>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as e:
        if e.lineno:
            return f"does not parse: {e.msg}", e.lineno
    except (ValueError, RecursionError, MemoryError):
        pass
    return message, line  # Python parses it (newer syntax than libcst knows?): libcst's account


def _finish(path: Path, src: SourceFile, result: ConversionResult, options: Options) -> FileResult:
    out = FileResult(
        path=str(path),
        status=result.status,
        markers=list(result.markers),
        rewrites=result.rewrites,
        pipelines_converted=result.pipelines_converted,
        pipelines_left=result.pipelines_left,
        changed=result.output != src.text,
    )
    if not out.changed:
        return out
    bad_line = engine.output_syntax_error(src.text, result.output)
    if bad_line is not None:
        # Never hand the user code that does not parse, not even as a diff.
        return FileResult.failed(str(path), "internal error: converted code does not parse", bad_line or None)
    if options.diff:
        out.diff = unified_diff(str(path), src.text, result.output)
    if options.write:
        out.written = write_source(path, src, result.output)
    return out


def unified_diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        _lines(before), _lines(after), fromfile=path, tofile=path
    )
    return "".join(lines)


def _lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


def default_jobs() -> int:
    if hasattr(os, "process_cpu_count"):  # 3.13+: respects the CPU affinity mask
        return os.process_cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def run(
    paths: Sequence[Path],
    options: Options = Options(),
    *,
    jobs: Optional[int] = None,
    on_result: Optional[Callable[[FileResult], None]] = None,
) -> list[FileResult]:
    """Process every path; results in input order. KeyboardInterrupt (also raised for SIGTERM)
    propagates after the files finished so far; each file is either old or new, never half."""
    jobs = jobs or default_jobs()
    options = _with_run_files(paths, options)
    with _sigterm_as_interrupt():
        if jobs > 1 and len(paths) > 1 and _FORK is not None:
            # Worker processes pay for importing libcst (about half a second each): only files
            # that mention DALI are worth one, and only when there are enough of them. The others
            # are read here and answered at once by the same pre-filter process_file applies.
            heavy = [i for i, p in enumerate(paths) if _may_mention_dali(p)]
            if len(heavy) > _POOL_THRESHOLD:
                heavy_set = set(heavy)
                light = [i for i in range(len(paths)) if i not in heavy_set]
                results: list = [None] * len(paths)
                for i in light:
                    results[i] = process_file(paths[i], options)
                    if on_result:
                        on_result(results[i])
                pooled = _run_pool([paths[i] for i in heavy], options, min(jobs, len(heavy)), on_result)
                for i, r in zip(heavy, pooled):
                    results[i] = r
                return results
        results = []
        for p in paths:
            results.append(process_file(p, options))
            if on_result:
                on_result(results[-1])
        return results


def _with_run_files(paths, options: Options) -> Options:
    """The run's files go into the project scope (a pipeline converts with its uses in another file
    only where the run converts both: imported_pipelines.py), and the projects of the files that
    may hold DALI code are read now, before any file is written, so that every file (in worker
    processes too, which inherit them) decides on the texts as they were."""
    scope = options.project
    if scope is None:
        return options
    if scope.files is None:
        scope = dataclasses.replace(scope, files=frozenset(os.path.abspath(str(p)) for p in paths))
        options = dataclasses.replace(options, project=scope)
    dali = [p for p in paths if _may_mention_dali(p)]
    if dali:
        from dali_migrate import imported_pipelines

        imported_pipelines.preload(dali, scope)
    return options


#: Workers must start as copies of this process: the project texts read before any file is
#: written (_with_run_files) reach them only so. A worker started fresh ("spawn", "forkserver":
#: Python 3.14's default on Linux, macOS's and Windows') would read the project again and could
#: see files this run already converted, and decide differently from the others. Without fork
#: the files are converted here, one after the other.
_FORK = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None

#: below this many files that mention DALI, converting them here beats starting workers
_POOL_THRESHOLD = 4


def _may_mention_dali(path: Path) -> bool:
    """Cheap look at the bytes (any encoding spells "dali" in ASCII); unreadable files count as
    worth a look, so their error is reported the usual way."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return True
    return b"dali" in data.lower()


def _run_pool(paths, options, jobs, on_result) -> list[FileResult]:
    # Workers forked from here inherit what is loaded now instead of each loading it again.
    from dali_migrate import catalog, rules

    catalog.load()
    rules.all_rules()
    pool = concurrent.futures.ProcessPoolExecutor(max_workers=jobs, initializer=_worker_init, mp_context=_FORK)
    futures: dict = {}
    try:
        for i, p in enumerate(paths):  # a loop, so an interrupt here still sees what was submitted
            futures[pool.submit(process_file, p, options)] = i
        results: list[Optional[FileResult]] = [None] * len(paths)
        for fut in concurrent.futures.as_completed(futures):
            i = futures[fut]
            try:
                results[i] = fut.result()
            except Exception as e:  # e.g. a killed worker broke the pool: report, don't crash
                results[i] = FileResult.failed(str(paths[i]), f"internal error: {type(e).__name__}: {e}")
            if on_result:
                on_result(results[i])
    except BaseException:
        # Files not started stay as they are; files in flight finish (their writes are atomic).
        # Cancelled one by one: shutdown(cancel_futures=True) alone is lost if the executor is
        # garbage-collected before its manager thread looks, and then everything still runs.
        for fut in futures:
            fut.cancel()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return results  # type: ignore[return-value]


def _worker_init() -> None:
    # What the worker inherits from the parent is the parent's: a collection here could run the
    # finalizers of its garbage in a process where their threads do not exist (a test process
    # that has used DALI segfaulted so in a worker's collection). The worker collects only what
    # it makes itself.
    gc.freeze()
    # Ctrl-C and a SIGTERM to the process group reach every worker: the parent alone decides
    # what to do (cancel what has not started, let running files finish), instead of workers
    # dying mid-file and the pool breaking with a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = os.getppid()

    def on_sigterm(signum, frame):
        if os.getppid() != parent:  # orphaned: nobody is left to wind us down
            os._exit(128 + signum)

    signal.signal(signal.SIGTERM, on_sigterm)


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """Let SIGTERM stop a run the same orderly way as Ctrl-C (temp files cleaned up)."""
    try:
        previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt
