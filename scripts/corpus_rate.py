#!/usr/bin/env python
"""Measure how much of a corpus of DALI pipeline-mode code the codemod converts.

    python scripts/corpus_rate.py PATH [--out docs/conversion-rate.md] [--commit SHA]

PATH (a directory, e.g. a checkout of DALI's ``docs/examples``, or one file) is copied to a
temporary directory and the codemod runs over every ``.py``/``.ipynb`` there that mentions DALI;
PATH itself is never touched. As in a run over a repository, a definition that another file of
the corpus imports is left as it was, with a marker (``dali_migrate/outside_users.py``; the corpus
directory is the project root). Each file is classified:

* ``full``      converted, no markers left;
* ``partial``   something converted, markers left;
* ``marked``    nothing converted, markers only (needs a person);
* ``unchanged`` mentions DALI but has no pipeline-mode code the codemod acts on;
* ``error``     the codemod reported an error: ``bug`` (an internal error of the codemod) or
  ``input`` (the file, or a notebook's code, does not parse / the notebook cannot be read).

Every converted file is byte-compiled (a notebook: its code cells joined, IPython magics and
shell lines left out) and checked for imports of ``nvidia.dali.fn``/``ops``/``pipeline`` that the
output still uses.

Each ``full`` file is then run on the CPU, converted and, separately, as the original pipeline-mode
code, so that a failure of the conversion can be told apart from an example that cannot run here
at all. Both are first moved onto the CPU (:func:`dali_migrate.device_cpu.to_cpu`: ``device="gpu"``
and ``"mixed"`` -> ``"cpu"``, ``.gpu()`` dropped, ``device_id`` -> None), notebooks as their code
cells joined with IPython lines dropped, and run in a subprocess (``--run-timeout`` seconds, no GPU
visible, ``MPLBACKEND=Agg``) with ``DALI_EXTRA_PATH`` pointing at a stand-in for DALI_extra made
of the project's fixtures (``scripts/dali_extra_standin.py``). A file that names a DALI_extra path
the stand-in lacks is ``not run``. ``--no-run`` skips the runs.

The page is deterministic for a given corpus, commit, ``--date`` and environment: files are sorted
by path and run outputs are reported without temporary paths.
"""

from __future__ import annotations

import argparse
import ast
import collections
import dataclasses
import datetime
import concurrent.futures
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Optional

from dali_migrate import engine, notebooks, outside_users, runner
from dali_migrate.device_cpu import to_cpu
from dali_migrate.model import ConversionError, Status

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dali_extra_standin as standin  # noqa: E402

CLASSES = ("full", "partial", "marked", "unchanged", "error")
_STATUS_CLASS = {
    Status.CONVERTED: "full",
    Status.PARTIAL: "partial",
    Status.NEEDS_REVIEW: "marked",
    Status.UNCHANGED: "unchanged",
    Status.ERROR: "error",
}
#: pipeline-mode modules whose names a fully converted file should no longer need
_PIPELINE_MODULES = ("nvidia.dali.fn", "nvidia.dali.ops", "nvidia.dali.pipeline")
_TOP_REASONS = 15
RUN_TIMEOUT = 120  # seconds, per run
_PLACEHOLDER_LINE = re.compile(r"^(\s*)__dali_migrate_corpus_\d+__\s*$", re.M)


@dataclasses.dataclass
class Row:
    path: str  # relative to the corpus root, "/"-separated
    cls: str
    converted: int = 0
    left: int = 0
    markers: list = dataclasses.field(default_factory=list)  # "[rule] reason" per marker
    error: str = ""
    error_kind: str = ""  # "bug" or "input" for class "error"
    compiles: str = "-"  # "ok", "SyntaxError ...", or "-" (not converted)
    leftover: list = dataclasses.field(default_factory=list)  # pipeline-mode names still used
    runs: str = "-"  # the "runs (CPU)" column; "-": not a full conversion, or --no-run
    run_ok: Optional[bool] = None  # the converted file ran (None: not run)
    original_ok: Optional[bool] = None  # the original pipeline-mode file ran (None: not run)

    @property
    def top_reason(self) -> str:
        if self.cls == "error":
            return f"{self.error_kind}: {self.error}"
        if not self.markers:
            return ""
        counts = collections.Counter(self.markers)
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]


# ------------------------------------------------------------------------------------------------
# running the codemod
# ------------------------------------------------------------------------------------------------


def collect(root: Path) -> tuple[list, int]:
    """(files under root that mention DALI, sorted; number of .py/.ipynb files skipped)."""
    chosen, skipped = [], 0
    for p in sorted(root.rglob("*")):
        if p.suffix not in (".py", ".ipynb") or not p.is_file():
            continue
        if any(part.startswith(".") for part in p.relative_to(root).parts):
            continue  # .ipynb_checkpoints and the like
        try:
            text = p.read_text(encoding="utf-8", errors="replace")
        except OSError:
            skipped += 1
            continue
        if engine.mentions_dali(text):
            chosen.append(p)
        else:
            skipped += 1
    return chosen, skipped


def error_kind(message: str) -> str:
    return "bug" if (message or "").startswith("internal error") else "input"


def traceback_of(path: Path) -> str:
    """Re-run the conversion of an errored file outside the runner's guard, for its traceback."""
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        if path.suffix == ".ipynb":
            notebooks.convert_notebook(text, path=str(path), config=runner.Options().config,
                                       convert=engine.convert_source,
                                       mentions_dali=engine.mentions_dali)
        else:
            engine.convert_source(text, path=str(path))
    except (ConversionError, notebooks.NotebookError):
        return ""
    except Exception:
        frames = traceback.format_exc().strip().splitlines()
        return "\n".join(frames[-6:])
    return ""


def code_of(path: Path, runnable: bool = False) -> str:
    """The Python a converted file holds: the file, or a notebook's code cells joined.

    ``runnable``: a notebook's IPython lines (which the joined code holds as placeholder names)
    become ``pass``, so that the code can run as a script.
    """
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".ipynb":
        return text
    if runnable:
        return _PLACEHOLDER_LINE.sub(lambda m: m.group(1) + "pass", code_of(path))
    return _futures_first(_joined_cells(text))


_FUTURE_LINE = re.compile(r"^from __future__ import [^\n]*\n", re.M)


def _futures_first(code: str) -> str:
    """IPython compiles each cell on its own, keeping the ``from __future__`` flags of earlier
    cells: a later cell may import from __future__. Joined into one module, those imports must
    come first (each leaves an empty line where it was)."""
    found = _FUTURE_LINE.findall(code)
    return "".join(found) + _FUTURE_LINE.sub("\n", code) if found else code


def _joined_cells(text: str) -> str:
    data = json.loads(text)
    ph = notebooks._Placeholders("corpus")
    parts = []
    for i, cell in enumerate(data.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        # IPython lines (magics, !shell, obj?) become placeholder names, as the codemod masks
        # them; cells of another interpreter (%%bash, %%writefile, ...) are left out.
        masked = notebooks.mask_cell(i, notebooks.source_text(cell), ph)
        if masked is not None:
            parts.append(masked.masked)
    return "\n\n".join(parts) + "\n"


def leftover_names(tree: ast.AST) -> list:
    """Pipeline-mode imports the code still uses (e.g. ``fn`` from ``import nvidia.dali.fn as fn``)."""
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith(_PIPELINE_MODULES):
                    bound[(a.asname or a.name).split(".")[0] if not a.asname else a.asname] = a.name
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                if node.module.startswith(_PIPELINE_MODULES) or (
                    node.module == "nvidia.dali" and a.name in ("fn", "ops", "pipeline_def", "Pipeline")
                ):
                    bound[a.asname or a.name] = f"{node.module}.{a.name}"
    # `import nvidia.dali.fn` binds `nvidia`, which the dynamic-mode import binds too: skip it
    bound.pop("nvidia", None)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return sorted(f"{name} ({mod})" for name, mod in bound.items() if name in used)


def check_output(path: Path, row: Row) -> None:
    try:
        code = code_of(path)
        compile(code, str(path), "exec", dont_inherit=True)
    except SyntaxError as e:
        row.compiles = f"SyntaxError line {e.lineno}: {e.msg}"
        return
    except (ValueError, json.JSONDecodeError) as e:
        row.compiles = f"unreadable: {e}"
        return
    row.compiles = "ok"
    row.leftover = leftover_names(ast.parse(code))


# ------------------------------------------------------------------------------------------------
# running the converted files (and their originals) on the CPU
# ------------------------------------------------------------------------------------------------

#: a no-op matplotlib for machines without it: plots are only displayed, so code that draws them
#: runs on, and what it computes from DALI's outputs before drawing still runs
_MPL_STANDIN = '''"""No-op stand-in for matplotlib (not installed here), written by scripts/corpus_rate.py."""


class _Nothing:
    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return _Nothing()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Nothing()

    def __getitem__(self, key):
        return _Nothing()

    def __setitem__(self, key, value):
        pass

    def __iter__(self):
        return iter(())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def subplots(*args, **kwargs):
    return _Nothing(), _Nothing()


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _Nothing()
'''
_MPL_SUBMODULES = ("pyplot", "gridspec", "patches", "image", "colors", "cm", "ticker", "animation",
                   "lines", "figure", "axes")
_ERROR_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning)\b")


def matplotlib_note() -> str:
    if importlib.util.find_spec("matplotlib") is not None:
        return "matplotlib with the Agg backend (`plt.show()` draws nothing)"
    return "matplotlib is not installed: a no-op stand-in takes its place (plots are only displayed)"


def _write_mpl_standin(folder: Path) -> None:
    pkg = folder / "matplotlib"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(_MPL_STANDIN)
    for name in _MPL_SUBMODULES:
        (pkg / f"{name}.py").write_text("from matplotlib import _Nothing, subplots, __getattr__  # noqa\n")


def _cpu_script(path: Path) -> tuple:
    """(script to run, its code) for a corpus file moved onto the CPU; a notebook's code is written
    beside it. ValueError if the code cannot be rewritten (it does not parse)."""
    code = code_of(path, runnable=True)
    try:
        code = to_cpu(code)
    except Exception as e:  # libcst's ParserSyntaxError and the like
        raise ValueError(f"cannot move onto the CPU: {type(e).__name__}") from None
    script = path if path.suffix == ".py" else path.with_name(path.stem + ".dali-run.py")
    script.write_text(code, encoding="utf-8")
    return script, code


def _clean(text: str, replace: dict) -> str:
    for old, new in replace.items():
        text = text.replace(old, new)
    return re.sub(r"0x[0-9a-fA-F]{6,}", "0x…", text)


def last_error_line(output: str) -> str:
    """The line that says what went wrong: a traceback's last line, else the last line printed."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [i for i, line in enumerate(lines) if _ERROR_LINE.match(line) and "Warning" not in line.split(":")[0]]
    if not errors:
        return (lines or ["(no output)"])[-1]
    head, rest = lines[errors[-1]], lines[errors[-1] + 1:]
    # DALI's errors go on over several lines: its own message follows "encountered:"
    if "encountered:" in rest and rest.index("encountered:") + 1 < len(rest):
        head = head.split(":")[0] + ": " + rest[rest.index("encountered:") + 1]
    elif head.endswith(":") and rest:
        head = head + " " + rest[0]
    # the same failure reads the same whether DALI reports it from a pipeline or from dynamic mode
    return re.sub(r'Assert on ".*?" failed: ', "", head)


def run_script(script: Path, env: dict, timeout: float, replace: dict) -> tuple:
    """(ran without error, what went wrong) for one script run in its own folder."""
    try:
        proc = subprocess.run([sys.executable, script.name], cwd=script.parent, env=env, timeout=timeout,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace")
    except subprocess.TimeoutExpired:
        return False, f"timed out after {timeout:g} s"
    if proc.returncode == 0:
        return True, ""
    line = last_error_line(proc.stderr) if proc.stderr.strip() else last_error_line(proc.stdout)
    # A script that raised can still die by a signal afterwards: DALI's threads abort the
    # interpreter's exit on some machines ("terminate called without an active exception",
    # SIGABRT). The Python error is the failure then; the signal only where there is none.
    if proc.returncode < 0 and "Traceback (most recent call last)" not in proc.stderr:
        line = f"killed by signal {-proc.returncode}" + (f" after: {line}" if line != "(no output)" else "")
    return False, _clean(line, replace)


def need_of(error: str) -> str:
    """What an example that fails this way needs and this machine lacks, or ""."""
    m = re.search(r"No module named '([^'.]+)", error)
    if m:
        return m.group(1)
    if re.search(r"cuda|gpu|nvml|nvjpeg|no device|not registered for cpu", error, re.I):
        return "a GPU"
    m = re.search(r"Failed to open (\S+)|No such file or directory: '([^']+)'", error)
    if m:
        return f"data at {m.group(1) or m.group(2)}"
    return ""


def verdict(conv: tuple, orig: tuple) -> str:
    """The "runs (CPU)" cell from (ok, error) of the converted file and of its original."""
    (c_ok, c_err), (o_ok, o_err) = conv, orig
    if c_ok and o_ok:
        return "ok"
    if c_ok:
        return f"ok (original fails: {o_err})"
    if o_ok:
        return f"run failed: {c_err}; original runs"
    need = need_of(c_err)
    if need and need == need_of(o_err):
        # which operator or call needs it is the original's message; the converted one's may be
        # the runtime's generic "no CUDA" error
        return f"both fail: needs {need}" + (f" (original: {o_err})" if need == "a GPU" else "")
    if c_err == o_err:
        return f"both fail: {c_err}"
    return f"run failed: {c_err}; original fails: {o_err}"


def run_rows(rows: list, conv_root: Path, orig_root: Path, work: Path, timeout: float,
             jobs: Optional[int], examples_data: bool = False) -> None:
    """Fill the run columns of the rows of fully converted files. ``examples_data``: the corpus
    is DALI's docs/examples, whose files read ``../../data/...``: a stand-in is laid out there."""
    todo = [r for r in rows if r.cls == "full" and r.compiles == "ok"]
    if not todo:
        return
    if examples_data:
        for root in (conv_root, orig_root):
            standin.build_examples_data(root)
    scripts, wanted = {}, set()
    for r in todo:
        try:
            scripts[r.path] = [_cpu_script(root / r.path) for root in (conv_root, orig_root)]
        except (ValueError, OSError, json.JSONDecodeError) as e:
            r.runs = f"not run: {e}"
            continue
        for _, code in scripts[r.path]:
            wanted.update(standin.wanted_paths(code))
    extra = work / "dali_extra"
    absent = standin.build(extra, wanted)
    env = dict(os.environ)
    env.update(DALI_EXTRA_PATH=str(extra), MPLBACKEND="Agg", CUDA_VISIBLE_DEVICES="",
               PYTHONDONTWRITEBYTECODE="1", PYTHONWARNINGS="ignore",
               PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]))
    if importlib.util.find_spec("matplotlib") is None:
        _write_mpl_standin(work / "mpl")
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(work / "mpl"), env.get("PYTHONPATH")) if p)
    replace = {str(extra): "$DALI_EXTRA_PATH", str(conv_root) + "/": "", str(orig_root) + "/": "",
               str(work) + "/": ""}
    jobs_to_run = []
    for r in todo:
        if r.path not in scripts:
            continue
        need = sorted({p for _, code in scripts[r.path] for p in standin.missing(extra, standin.wanted_paths(code))})
        if need:
            why = [p + (f" ({absent[p]})" if p in absent else "") for p in need]
            r.runs = "not run: no stand-in for " + ", ".join(why)
            continue
        jobs_to_run.append(r)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs or os.cpu_count() or 1)) as pool:
        futures = {
            r.path: [pool.submit(run_script, script, env, timeout, replace) for script, _ in scripts[r.path]]
            for r in jobs_to_run
        }
        for r in jobs_to_run:
            conv, orig = (f.result() for f in futures[r.path])
            r.run_ok, r.original_ok = conv[0], orig[0]
            r.runs = verdict(conv, orig)


def measure(corpus: Path, jobs: Optional[int] = None, run: bool = True,
            timeout: float = RUN_TIMEOUT, examples_data: bool = False) -> tuple[list, int, list]:
    """(rows sorted by path, files skipped, [(path, traceback)] of codemod bugs)."""
    with tempfile.TemporaryDirectory(prefix="dali-corpus-") as tmp:
        root = Path(tmp) / "corpus"
        originals = Path(tmp) / "original"
        if corpus.is_dir():
            shutil.copytree(corpus, root, symlinks=True)
        else:
            root.mkdir()
            shutil.copy2(corpus, root / corpus.name)
        if run:  # the originals run from a copy of their own: runs leave files behind (indexes...)
            shutil.copytree(root, originals, symlinks=True)
        files, skipped = collect(root)
        # as a run over a repository: what another file of the corpus imports stays as it was
        # (outside_users.py), the corpus being the project
        options = runner.Options(write=True, project=outside_users.Scope(root=str(root)))
        results = runner.run(files, options, jobs=jobs)
        rows, bugs = [], []
        for p, r in zip(files, results):
            rel = p.relative_to(root).as_posix()
            row = Row(path=rel, cls=_STATUS_CLASS[r.status], converted=r.pipelines_converted,
                      left=r.pipelines_left, markers=[f"[{m.rule}] {m.reason}" for m in r.markers])
            if r.status is Status.ERROR:
                row.error = (r.error or "").replace(str(root) + "/", "")
                if r.error_cell is not None:
                    row.error += f" (cell {r.error_cell}, line {r.error_line})"
                elif r.error_line is not None:
                    row.error += f" (line {r.error_line})"
                row.error_kind = error_kind(r.error)
                if row.error_kind == "bug":
                    bugs.append((rel, traceback_of(p).replace(str(root) + "/", "")))
            elif r.written or r.changed:
                check_output(p, row)
            rows.append(row)
        rows.sort(key=lambda row: row.path)
        if run:
            run_rows(rows, root, originals, Path(tmp), timeout, jobs, examples_data)
        return rows, skipped, sorted(bugs)


# ------------------------------------------------------------------------------------------------
# the page
# ------------------------------------------------------------------------------------------------


def _cell(text: str, limit: int = 140) -> str:
    text = " ".join(str(text).split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _pct(n: int, total: int) -> str:
    return f"{100.0 * n / total:.1f}%" if total else "-"


TITLE = "Conversion rate on DALI's examples"
ABOUT = ("How much of real pipeline-mode code `dali-migrate convert` converts, measured on the\n"
         "example programs and notebooks of DALI's own documentation (`docs/examples`).")


def render(rows: list, skipped: int, bugs: list, *, commit: str, date: str, source: str,
           ran: bool = True, timeout: float = RUN_TIMEOUT, mpl: str = "", title: str = TITLE,
           about: str = ABOUT, examples_data: bool = False) -> str:
    total = len(rows)
    counts = collections.Counter(row.cls for row in rows)
    out = [
        f"# {title}",
        "",
        *about.splitlines(),
        "Generated by `scripts/corpus_rate.py`; do not edit by hand.",
        "",
        f"- Date: {date}",
        *([f"- DALI commit: {commit}"] if commit else []),
        f"- Corpus: {source}",
        f"- Files that mention DALI (measured): {total}; other `.py`/`.ipynb` files skipped: {skipped}",
        "- Converted outputs are byte-compiled (notebooks: code cells joined, magics left out).",
    ]
    if ran:
        out += [
            "- Each **full** file is run on the CPU, converted and, separately, as the original",
            "  pipeline-mode code: moved onto the CPU first (`dali_migrate.device_cpu.to_cpu`),",
            "  notebooks as their code cells joined with IPython lines dropped, in a subprocess",
            f"  ({timeout:g} s at most, no GPU visible) with `DALI_EXTRA_PATH` set to a stand-in",
            "  made of the project's fixtures (`scripts/dali_extra_standin.py`: same formats, not",
            "  the same content). A file that names a DALI_extra path the stand-in lacks is",
            f"  **not run**. Plots: {mpl or matplotlib_note()}.",
        ]
        if examples_data:
            out += [
                "- The examples' own `data/` folder (`../../data/images`, `../../data/audio`) is a",
                "  stand-in too (`dali_extra_standin.build_examples_data`): two of the fixtures' JPEG class",
                "  folders with a `file_list.txt` of `<class>/<file> <label>` lines, and their WAVs.",
            ]
    else:
        out.append("- Nothing is run (`--no-run`): **not run**.")
    out += [
        "",
        "Classes: **full** converted, no markers; **partial** something converted, markers left;",
        "**marked** nothing converted, markers only (needs a person); **unchanged** no",
        "pipeline-mode code the codemod acts on; **error** the codemod reported an error",
        "(*bug*: an internal error of the codemod; *input*: the file or notebook does not parse).",
        "",
        "## Counts",
        "",
        "| class | files | share |",
        "| --- | ---: | ---: |",
    ]
    for cls in CLASSES:
        out.append(f"| {cls} | {counts.get(cls, 0)} | {_pct(counts.get(cls, 0), total)} |")
    out.append(f"| **total** | {total} | {_pct(total, total)} |")
    with_pipelines = [r for r in rows if r.converted or r.left]
    pconv = sum(r.converted for r in rows)
    pleft = sum(r.left for r in rows)
    out += [
        "",
        f"Pipelines converted: {pconv}; left with a marker: {pleft}"
        f" ({_pct(pconv, pconv + pleft)} of {pconv + pleft} converted,"
        f" in {len(with_pipelines)} files).",
        "",
    ]
    touched = [r for r in rows if r.compiles != "-"]
    bad = [r for r in touched if r.compiles != "ok"]
    left_full = [r for r in rows if r.cls == "full" and r.leftover]
    out += [
        f"Converted outputs that byte-compile: {len(touched) - len(bad)} of {len(touched)}.",
        f"Fully converted files still using a pipeline-mode import: {len(left_full)}.",
        "",
    ]
    if ran:
        full = [r for r in rows if r.cls == "full"]
        broken = [r for r in full if r.run_ok is False and r.original_ok]
        out += [
            f"Converted files that run on the CPU: {sum(bool(r.run_ok) for r in full)} of {len(full)};"
            f" originals that run: {sum(bool(r.original_ok) for r in full)};"
            f" not run: {sum(r.run_ok is None for r in full)}.",
            f"Converted files that fail while their original runs: {len(broken)}"
            + (" (" + ", ".join(f"`{r.path}`" for r in broken) + ")." if broken else "."),
            "",
        ]
    out += [
        "## Most frequent marker reasons",
        "",
        "Counted over markers (a reason left twice in one file counts twice) and over files.",
        "",
        "| # | markers | files | reason |",
        "| ---: | ---: | ---: | --- |",
    ]
    by_marker = collections.Counter(m for r in rows for m in r.markers)
    by_file = collections.Counter(m for r in rows for m in set(r.markers))
    top = sorted(by_marker.items(), key=lambda kv: (-kv[1], -by_file[kv[0]], kv[0]))[:_TOP_REASONS]
    if not top:
        out.append("| - | 0 | 0 | (no markers) |")
    for i, (reason, n) in enumerate(top, 1):
        out.append(f"| {i} | {n} | {by_file[reason]} | {_cell(reason, 240)} |")
    out += ["", "## Errors", ""]
    errors = [r for r in rows if r.cls == "error"]
    if not errors:
        out.append("None.")
    for r in errors:
        out.append(f"- `{r.path}` ({r.error_kind}): {_cell(r.error, 300)}")
    for path, tb in bugs:
        if tb:
            out += ["", f"Traceback for `{path}`:", "", "```text", tb, "```"]
    out += [
        "",
        "## Per file",
        "",
        "| file | class | pipelines converted | pipelines left | compiles | runs (CPU) | still uses"
        " | top reason |",
        "| --- | --- | ---: | ---: | --- | --- | --- | --- |",
    ]
    for r in rows:
        out.append(
            f"| `{r.path}` | {r.cls} | {r.converted} | {r.left} | {_cell(r.compiles, 60)}"
            f" | {_cell(r.runs, 200)} | {_cell(', '.join(r.leftover), 80)} | {_cell(r.top_reason)} |"
        )
    return "\n".join(out) + "\n"


def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", type=Path, help="corpus: a directory (e.g. DALI's docs/examples) or a file")
    ap.add_argument("--out", type=Path, default=Path("docs/conversion-rate.md"))
    ap.add_argument("--commit", default="unknown",
                    help="DALI commit the corpus was taken from ('' leaves the line out)")
    ap.add_argument("--date", default=None, help="date on the page [default: today, UTC]")
    ap.add_argument("--source", default=None,
                    help="where the corpus came from [default: NVIDIA/DALI docs/examples for the default "
                         "--title/--about, else the corpus path]")
    ap.add_argument("--title", default=TITLE, help="the page's title")
    ap.add_argument("--about", default=ABOUT, help="what the corpus is, under the title")
    ap.add_argument("-j", "--jobs", type=int, default=None, help="conversions and runs at a time")
    ap.add_argument("--no-run", dest="run", action="store_false", help="do not run the full conversions")
    ap.add_argument("--run-timeout", type=float, default=RUN_TIMEOUT, help="seconds per run [%(default)s]")
    ap.add_argument("--examples-data", dest="examples_data", action="store_true", default=None,
                    help="lay out a stand-in for docs/examples/data beside the corpus's files "
                         "[default: on for DALI's examples (the default --title/--about)]")
    ap.add_argument("--no-examples-data", dest="examples_data", action="store_false")
    args = ap.parse_args(argv)
    if not args.path.exists():
        ap.error(f"{args.path} does not exist")
    dali_examples = (args.title, args.about) == (TITLE, ABOUT)
    if args.source is None:  # (another corpus, described by its own --title/--about, is not DALI's)
        args.source = "NVIDIA/DALI docs/examples" if dali_examples else str(args.path)
    if args.examples_data is None:
        args.examples_data = dali_examples
    date = args.date or datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    rows, skipped, bugs = measure(args.path, jobs=args.jobs, run=args.run, timeout=args.run_timeout,
                                  examples_data=args.examples_data)
    page = render(rows, skipped, bugs, commit=args.commit, date=date, source=args.source,
                  ran=args.run, timeout=args.run_timeout, title=args.title, about=args.about,
                  examples_data=args.examples_data and args.run)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(page, encoding="utf-8")
    counts = collections.Counter(r.cls for r in rows)
    print(f"{len(rows)} files: " + ", ".join(f"{c} {counts.get(c, 0)}" for c in CLASSES)
          + f" -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
