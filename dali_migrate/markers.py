"""The ``# dali-migrate:`` comments left above code a person must convert.

The report is read back from the output text (see :func:`scan`), so markers written by an earlier
run count as much as new ones: ``--check`` keeps failing until a person deals with them.
"""

from __future__ import annotations

import functools
import re
from typing import Iterable, Sequence, TypeVar

import libcst as cst

from dali_migrate.model import MARKER_PREFIX, Marker

S = TypeVar("S", bound=cst.CSTNode)


@functools.lru_cache(maxsize=None)
def _marker_re(prefix: str) -> "re.Pattern":
    # The default prefix is always recognised too, so switching ``marker-style`` does not hide
    # markers an earlier run wrote (they still count for --check, and are not written twice).
    prefixes = sorted({prefix, MARKER_PREFIX}, key=len, reverse=True)
    alternatives = "|".join(re.escape(p) for p in prefixes)
    return re.compile(r"^\s*(?:" + alternatives + r")\s*\[(?P<rule>[\w.-]+)\]\s*(?P<reason>.*?)\s*$")


def text(rule: str, reason: str, prefix: str = MARKER_PREFIX) -> str:
    return f"{prefix} [{rule}] {reason}"


def add(statement: S, rule: str, reasons: Iterable[str], prefix: str = MARKER_PREFIX) -> S:
    """Return ``statement`` with one marker line per reason above it, skipping ones already there
    (in this prefix or the default one)."""
    leading: Sequence[cst.EmptyLine] = statement.leading_lines  # type: ignore[attr-defined]
    present = on(statement, prefix)
    new = []
    for reason in reasons:
        # A reason quoting code can span lines; a comment cannot, and scan() reads one line back.
        reason = " ".join(line.strip() for line in reason.strip().splitlines())
        key = (rule, reason)
        if key not in present:
            present.add(key)
            new.append(cst.EmptyLine(comment=cst.Comment(text(rule, reason, prefix))))
    if not new:
        return statement
    return statement.with_changes(leading_lines=[*leading, *new])  # type: ignore[attr-defined]


def on(statement: cst.CSTNode, prefix: str = MARKER_PREFIX) -> set:
    """{(rule, reason)} of the markers above ``statement`` (in this prefix or the default one)."""
    pattern = _marker_re(prefix)
    found = set()
    for line in getattr(statement, "leading_lines", ()):
        if line.comment is not None:
            m = pattern.match(line.comment.value)
            if m:
                found.add((m.group("rule"), m.group("reason")))
    return found


def scan(source: str, prefix: str = MARKER_PREFIX) -> list:
    """Every marker in ``source`` with its 1-based line."""
    pattern = _marker_re(prefix)
    found = []
    for lineno, line in enumerate(source.splitlines(), start=1):
        m = pattern.match(line)
        if m:
            found.append(Marker(line=lineno, rule=m.group("rule"), reason=m.group("reason")))
    return found
