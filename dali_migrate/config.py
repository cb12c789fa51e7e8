"""Settings of one conversion run: command-line flags over ``[tool.dali-migrate]`` (settings.py)."""

from __future__ import annotations

import dataclasses
from typing import Optional

from dali_migrate.model import MARKER_PREFIX

NATIVE_NDD = "nvidia.dali.experimental.dynamic"


@dataclasses.dataclass(frozen=True)
class Config:
    #: module the converted code imports as ``ndd``
    ndd_module: str = NATIVE_NDD
    #: rule ids to run; None means every registered rule
    enabled_rules: Optional[frozenset] = None
    #: what every marker comment starts with (``marker-style``); the default one is always
    #: recognised as well when reading markers back
    marker_prefix: str = MARKER_PREFIX
