"""What a run tells the user: the JSON report, the summary table, and the exit code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Sequence

from dali_migrate import __version__
from dali_migrate.model import Status
from dali_migrate.runner import FileResult

REPORT_VERSION = 1

EXIT_CLEAN = 0
EXIT_CHANGES = 1  # changes made or needed, or markers left for a person
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130  # the shell convention for "killed by SIGINT"


def exit_code(results: Iterable[FileResult]) -> int:
    statuses = {r.status for r in results}
    if Status.ERROR in statuses:  # errors win: a half-done run must not look like success
        return EXIT_ERROR
    if statuses - {Status.UNCHANGED}:
        return EXIT_CHANGES
    return EXIT_CLEAN


def file_entry(r: FileResult) -> dict:
    entry = {
        "path": r.path,
        "status": r.status.value,
        "changed": r.changed,
        "written": r.written,
        "markers": [m.as_dict() for m in r.markers],
        "counts": {
            "rewrites": r.rewrites,
            "markers": len(r.markers),
            "pipelines_converted": r.pipelines_converted,
            "pipelines_left": r.pipelines_left,
        },
    }
    if r.status is Status.ERROR:
        entry["error"] = {"message": r.error, "line": r.error_line}
        if r.error_cell is not None:  # notebooks: `line` is within that cell
            entry["error"]["cell"] = r.error_cell
    return entry


def totals(results: Sequence[FileResult]) -> dict:
    by_status = {s.value: 0 for s in Status}
    for r in results:
        by_status[r.status.value] += 1
    return {
        "files": len(results),
        **by_status,
        "markers": sum(len(r.markers) for r in results),
        "rewrites": sum(r.rewrites for r in results),
        "pipelines_converted": sum(r.pipelines_converted for r in results),
        "pipelines_left": sum(r.pipelines_left for r in results),
        "written": sum(r.written for r in results),
    }


def build_report(results: Sequence[FileResult], *, mode: str) -> dict:
    return {
        "version": REPORT_VERSION,
        "tool": f"dali-migrate {__version__}",
        "mode": mode,  # "write", "check" or "diff": whether "changed" files were written
        "files": [file_entry(r) for r in results],
        "totals": totals(results),
        "exit_code": exit_code(results),
    }


def write_report(path: Path, results: Sequence[FileResult], *, mode: str) -> None:
    text = json.dumps(build_report(results, mode=mode), indent=2) + "\n"
    Path(path).write_text(text, encoding="utf-8")


def problem_lines(results: Iterable[FileResult]) -> list[str]:
    """One line per marker and per error, in the `path:line:` form editors jump to."""
    lines = []
    for r in results:
        if r.status is Status.ERROR:
            if r.error_cell is not None:  # notebooks: "nb.ipynb: cell 3, line 2: error: ..."
                where = f"{r.path}: cell {r.error_cell}" + (f", line {r.error_line}" if r.error_line else "")
            else:
                where = f"{r.path}:{r.error_line}" if r.error_line else r.path
            lines.append(f"{where}: error: {r.error}")
        for m in r.markers:
            if m.cell is not None:
                lines.append(f"{r.path}: cell {m.cell}, line {m.line}: [{m.rule}] {m.reason}")
            else:
                lines.append(f"{r.path}:{m.line}: [{m.rule}] {m.reason}")
    return lines


def summary_table(results: Sequence[FileResult], *, written: bool) -> list[str]:
    t = totals(results)
    label = {
        Status.CONVERTED: "converted" if written else "would be converted",
        Status.PARTIAL: "partially converted" if written else "would be partially converted",
        Status.NEEDS_REVIEW: "need review",
        Status.UNCHANGED: "unchanged",
        Status.ERROR: "errors (left untouched)",
    }
    rows = [(label[s], t[s.value]) for s in Status] + [("markers needing a person", t["markers"])]
    width = max(len(name) for name, _ in rows)
    lines = [f"{t['files']} file(s) checked" + ("" if written else "; nothing written")]
    lines += [f"  {name:<{width}}  {count:>6}" for name, count in rows]
    return lines
