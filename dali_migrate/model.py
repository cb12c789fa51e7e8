"""What a conversion produces: per-file results and the markers left for a person."""

from __future__ import annotations

import dataclasses
import enum
from typing import Optional

#: Every marker the codemod writes starts with this, so a later run can recognise its own
#: markers (no duplicates) and ``--check`` can count what still needs a person.
MARKER_PREFIX = "# dali-migrate:"


class Status(str, enum.Enum):
    CONVERTED = "converted"  # every pipeline-mode construct was rewritten
    PARTIAL = "partial"  # something was rewritten, something was left with a marker
    UNCHANGED = "unchanged"  # nothing to do (no DALI code, or already converted)
    NEEDS_REVIEW = "needs-review"  # nothing rewritten, but markers were left/are present
    ERROR = "error"  # could not be read, parsed or converted; file untouched


@dataclasses.dataclass(frozen=True)
class Marker:
    """A construct left as it was, with what a person must do about it."""

    line: int  # 1-based line in the *output* text where the marker comment stands
    rule: str  # id of the rule that gave up
    reason: str  # what a person must do
    # Notebooks only: 1-based index of the cell among all cells of the notebook (markdown ones
    # included); `line` is then the line within that cell's source. None for .py files.
    cell: Optional[int] = None

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        if self.cell is None:
            del d["cell"]
        return d


@dataclasses.dataclass
class ConversionResult:
    """The outcome of converting one source text (no I/O involved)."""

    source: str
    output: str
    markers: list[Marker] = dataclasses.field(default_factory=list)
    rewrites: int = 0  # how many constructs were rewritten
    pipelines_converted: int = 0
    pipelines_left: int = 0

    @property
    def changed(self) -> bool:
        return self.output != self.source

    @property
    def status(self) -> Status:
        if not self.changed and not self.markers:
            return Status.UNCHANGED
        if self.markers and (not self.changed or self.rewrites == 0):
            # nothing converted: the only change, if any, is the markers themselves
            return Status.NEEDS_REVIEW
        if self.markers:
            return Status.PARTIAL
        return Status.CONVERTED


class ConversionError(Exception):
    """The input cannot be converted at all (e.g. it does not parse)."""

    def __init__(self, message: str, line: Optional[int] = None):
        super().__init__(message)
        self.message = message
        self.line = line
