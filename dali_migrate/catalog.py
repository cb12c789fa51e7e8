"""DALI operator catalog: facts about every ``nvidia.dali.fn`` operator and its dynamic-mode
(``nvidia.dali.experimental.dynamic``) counterpart.

The data is generated from DALI's own registries by ``scripts/generate_catalog.py`` and
shipped as ``data/catalog.json``.  This module deliberately uses the standard library only:
the codemod runs in environments (pre-commit hooks, CI linters) where DALI, numpy and torch
are not installed.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from importlib import resources
from typing import Optional, Tuple


@dataclasses.dataclass(frozen=True)
class OpInfo:
    fn_name: str  # path under nvidia.dali.fn ("readers.file", "image_decoder")
    schema: str  # DALI schema name ("readers__File")
    ops_name: str  # path under nvidia.dali.ops ("readers.File")
    ndd_name: Optional[str]  # path under ndd ("readers.File", "decoders.image"); None: no counterpart
    is_reader: bool
    reader_class: Optional[str]  # ndd reader class name ("File")
    takes_seed: bool  # schema has a random seed argument (random ops *and* shuffling readers)
    is_random: bool  # draws random numbers per call; takes `rng=` in ndd (never for readers)
    deprecated_alias_of: Optional[str]  # fn_name of a drop-in replacement (same args/inputs/outputs)
    moved_from_experimental: bool  # fn.experimental.X whose ndd counterpart is outside experimental
    args: Tuple[str, ...]  # public (non-hidden) argument names, sorted
    min_inputs: int
    max_inputs: int
    num_outputs: Optional[int]  # None when it depends on arguments
    devices: Tuple[str, ...]  # subset of ("cpu", "gpu", "mixed")
    deprecated: bool
    # fn_name DALI recommends instead, even when it is not a drop-in (ssd_random_crop ->
    # random_bbox_crop); deprecated_alias_of is set only when a plain rename is safe.
    replaced_by: Optional[str] = None
    # Outputs of a call that passes none of num_outputs_args, or passes them at their default
    # literal (resize: 1 unless save_attrs); None where the count follows the number of inputs
    # or DALI cannot count without more arguments.
    default_num_outputs: Optional[int] = None
    # Arguments that change the output count -> their default as a Python literal (None: giving
    # the argument at all may change the count).
    num_outputs_args: Tuple[Tuple[str, object], ...] = ()
    # A reader's arguments from DALI's common reader schema LoaderBase (shuffling, sharding,
    # prefetching), sorted; () for other operators.
    loader_args: Tuple[str, ...] = ()


class Catalog:
    def __init__(self, data: dict):
        self.dali_version: str = data["dali_version"]
        self._by_fn = {}
        for fn_name, fields in data["ops"].items():
            fields = dict(fields)
            for key in ("args", "devices", "loader_args"):
                fields[key] = tuple(fields.get(key, ()))
            fields["num_outputs_args"] = tuple(sorted(fields.get("num_outputs_args", {}).items()))
            self._by_fn[fn_name] = OpInfo(fn_name=fn_name, **fields)
        self._by_ops = {info.ops_name: info for info in self._by_fn.values() if info.ops_name}

    def fn(self, dotted: str) -> Optional[OpInfo]:
        """Look up by path under ``nvidia.dali.fn`` (``"readers.file"``)."""
        return self._by_fn.get(dotted)

    def ops(self, dotted: str) -> Optional[OpInfo]:
        """Look up by path under ``nvidia.dali.ops`` (``"FileReader"``, ``"random.CoinFlip"``)."""
        return self._by_ops.get(dotted)

    def all(self) -> list:
        return [self._by_fn[k] for k in sorted(self._by_fn)]

    def __len__(self) -> int:
        return len(self._by_fn)


@functools.lru_cache(maxsize=None)
def load() -> Catalog:
    """The catalog shipped with the package (cached)."""
    text = resources.files(__package__).joinpath("data").joinpath("catalog.json").read_text("utf-8")
    return Catalog(json.loads(text))
