"""Settings of one conversion run (command-line flags, later also ``[tool.dali-migrate]``)."""

from __future__ import annotations

import dataclasses
from typing import Optional

NATIVE_NDD = "nvidia.dali.experimental.dynamic"


@dataclasses.dataclass(frozen=True)
class Config:
    #: module the converted code imports as ``ndd``
    ndd_module: str = NATIVE_NDD
    #: rule ids to run; None means every registered rule
    enabled_rules: Optional[frozenset] = None
