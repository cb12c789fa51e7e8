"""The ``# dali-migrate:`` comments left above code a person must convert.

The report is read back from the output text (see :func:`scan`), so markers written by an earlier
run count as much as new ones: ``--check`` keeps failing until a person deals with them.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence, TypeVar

import libcst as cst

from dali_migrate.model import MARKER_PREFIX, Marker

_MARKER_RE = re.compile(r"^\s*" + re.escape(MARKER_PREFIX) + r"\s*\[(?P<rule>[\w.-]+)\]\s*(?P<reason>.*?)\s*$")

S = TypeVar("S", bound=cst.CSTNode)


def text(rule: str, reason: str) -> str:
    return f"{MARKER_PREFIX} [{rule}] {reason}"


def add(statement: S, rule: str, reasons: Iterable[str]) -> S:
    """Return ``statement`` with one marker line per reason above it, skipping ones already there."""
    leading: Sequence[cst.EmptyLine] = statement.leading_lines  # type: ignore[attr-defined]
    present = {line.comment.value for line in leading if line.comment is not None}
    new = []
    for reason in reasons:
        comment = text(rule, reason)
        if comment not in present:
            present.add(comment)
            new.append(cst.EmptyLine(comment=cst.Comment(comment)))
    if not new:
        return statement
    return statement.with_changes(leading_lines=[*leading, *new])  # type: ignore[attr-defined]


def scan(source: str) -> list:
    """Every marker in ``source`` with its 1-based line."""
    found = []
    for lineno, line in enumerate(source.splitlines(), start=1):
        m = _MARKER_RE.match(line)
        if m:
            found.append(Marker(line=lineno, rule=m.group("rule"), reason=m.group("reason")))
    return found
