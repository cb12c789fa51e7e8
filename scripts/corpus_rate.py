#!/usr/bin/env python
"""Measure how much of a corpus of DALI pipeline-mode code the codemod converts.

    python scripts/corpus_rate.py PATH [--out docs/conversion-rate.md] [--commit SHA]

PATH (a directory, e.g. a checkout of DALI's ``docs/examples``, or one file) is copied to a
temporary directory and the codemod runs over every ``.py``/``.ipynb`` there that mentions DALI;
PATH itself is never touched. Each file is classified:

* ``full``      converted, no markers left;
* ``partial``   something converted, markers left;
* ``marked``    nothing converted, markers only (needs a person);
* ``unchanged`` mentions DALI but has no pipeline-mode code the codemod acts on;
* ``error``     the codemod reported an error: ``bug`` (an internal error of the codemod) or
  ``input`` (the file, or a notebook's code, does not parse / the notebook cannot be read).

Every converted file is byte-compiled (a notebook: its code cells joined, IPython magics and
shell lines left out) and checked for imports of ``nvidia.dali.fn``/``ops``/``pipeline`` that the
output still uses. Nothing is run: DALI's examples need a GPU or external data (``not run``).

The page is deterministic for a given corpus, commit and ``--date``: files are sorted by path.
"""

from __future__ import annotations

import argparse
import ast
import collections
import dataclasses
import datetime
import json
import shutil
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Optional

from dali_migrate import engine, notebooks, runner
from dali_migrate.model import ConversionError, Status

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


def code_of(path: Path) -> str:
    """The Python a converted file holds: the file, or a notebook's code cells joined."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".ipynb":
        return text
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


def measure(corpus: Path, jobs: Optional[int] = None) -> tuple[list, int, list]:
    """(rows sorted by path, files skipped, [(path, traceback)] of codemod bugs)."""
    with tempfile.TemporaryDirectory(prefix="dali-corpus-") as tmp:
        root = Path(tmp) / "corpus"
        if corpus.is_dir():
            shutil.copytree(corpus, root, symlinks=True)
        else:
            root.mkdir()
            shutil.copy2(corpus, root / corpus.name)
        files, skipped = collect(root)
        results = runner.run(files, runner.Options(write=True), jobs=jobs)
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
        return rows, skipped, sorted(bugs)


# ------------------------------------------------------------------------------------------------
# the page
# ------------------------------------------------------------------------------------------------


def _cell(text: str, limit: int = 140) -> str:
    text = " ".join(str(text).split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _pct(n: int, total: int) -> str:
    return f"{100.0 * n / total:.1f}%" if total else "-"


def render(rows: list, skipped: int, bugs: list, *, commit: str, date: str, source: str) -> str:
    total = len(rows)
    counts = collections.Counter(row.cls for row in rows)
    out = [
        "# Conversion rate on DALI's examples",
        "",
        "How much of real pipeline-mode code `dali-migrate convert` converts, measured on the",
        "example programs and notebooks of DALI's own documentation (`docs/examples`).",
        "Generated by `scripts/corpus_rate.py`; do not edit by hand.",
        "",
        f"- Date: {date}",
        f"- DALI commit: {commit}",
        f"- Corpus: {source}",
        f"- Files that mention DALI (measured): {total}; other `.py`/`.ipynb` files skipped: {skipped}",
        "- Converted outputs are byte-compiled (notebooks: code cells joined, magics left out);",
        "  none is run (they need a GPU or external data): **not run**.",
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
        "| file | class | pipelines converted | pipelines left | compiles | still uses | top reason |",
        "| --- | --- | ---: | ---: | --- | --- | --- |",
    ]
    for r in rows:
        out.append(
            f"| `{r.path}` | {r.cls} | {r.converted} | {r.left} | {_cell(r.compiles, 60)}"
            f" | {_cell(', '.join(r.leftover), 80)} | {_cell(r.top_reason)} |"
        )
    return "\n".join(out) + "\n"


def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", type=Path, help="corpus: a directory (e.g. DALI's docs/examples) or a file")
    ap.add_argument("--out", type=Path, default=Path("docs/conversion-rate.md"))
    ap.add_argument("--commit", default="unknown", help="DALI commit the corpus was taken from")
    ap.add_argument("--date", default=None, help="date on the page [default: today, UTC]")
    ap.add_argument("--source", default="NVIDIA/DALI docs/examples", help="where the corpus came from")
    ap.add_argument("-j", "--jobs", type=int, default=None)
    args = ap.parse_args(argv)
    if not args.path.exists():
        ap.error(f"{args.path} does not exist")
    date = args.date or datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    rows, skipped, bugs = measure(args.path, jobs=args.jobs)
    page = render(rows, skipped, bugs, commit=args.commit, date=date, source=args.source)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(page, encoding="utf-8")
    counts = collections.Counter(r.cls for r in rows)
    print(f"{len(rows)} files: " + ", ".join(f"{c} {counts.get(c, 0)}" for c in CLASSES)
          + f" -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
