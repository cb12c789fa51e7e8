"""Compare one iteration's outputs, and say where they first differ."""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np


@dataclasses.dataclass
class Mismatch:
    iteration: int
    output: Optional[int]  # None: the difference is where the data ends, not in an output
    sample: Optional[int]
    what: str  # "count", "batch size", "dtype", "shape", "layout", "device", "values", "end of data"
    detail: str
    position: Optional[tuple] = None
    max_abs_diff: Optional[float] = None
    operator: Optional[str] = None

    def describe(self) -> str:
        where = f"iteration {self.iteration}" + (f", output {self.output}" if self.output is not None else "")
        if self.sample is not None:
            where += f", sample {self.sample}"
        text = f"{where}: {self.what} differ: {self.detail}" if self.output is not None else f"{where}: {self.detail}"
        if self.position is not None:
            text += f"; first difference at {self.position}"
        if self.max_abs_diff is not None:
            text += f"; max abs difference {self.max_abs_diff:g}"
        if self.operator:
            text += f"; output produced by {self.operator}"
        return text


def _layout(value) -> str:
    return value or ""


def compare_iteration(iteration: int, original: list, converted: list, rtol: float, atol: float, producers: list) -> Optional[Mismatch]:
    """``original``/``converted``: per output, (device, layout, [numpy sample, ...])."""
    if len(original) != len(converted):
        return Mismatch(iteration, 0, None, "count", f"{len(original)} outputs vs {len(converted)}")
    for k, ((dev_a, lay_a, a), (dev_b, lay_b, b)) in enumerate(zip(original, converted)):
        op = producers[k] if k < len(producers) else None
        if len(a) != len(b):
            return Mismatch(iteration, k, None, "batch size", f"{len(a)} vs {len(b)}", operator=op)
        if dev_a != dev_b:
            return Mismatch(iteration, k, None, "device", f"{dev_a} vs {dev_b}", operator=op)
        if _layout(lay_a) != _layout(lay_b):
            return Mismatch(iteration, k, None, "layout", f"{lay_a!r} vs {lay_b!r}", operator=op)
        for i, (x, y) in enumerate(zip(a, b)):
            if x.dtype != y.dtype:
                return Mismatch(iteration, k, i, "dtype", f"{x.dtype} vs {y.dtype}", operator=op)
            if x.shape != y.shape:
                return Mismatch(iteration, k, i, "shape", f"{x.shape} vs {y.shape}", operator=op)
            exact = rtol == 0 and atol == 0
            if exact or not np.issubdtype(x.dtype, np.inexact):
                equal = np.array_equal(x, y, equal_nan=np.issubdtype(x.dtype, np.inexact))
                bad = x != y
            else:
                bad = ~np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=True)
                equal = not bad.any()
            if not equal:
                pos = tuple(int(v) for v in np.argwhere(bad)[0]) if bad.ndim else ()
                diff = np.abs(x.astype(np.float64) - y.astype(np.float64)) if x.dtype != np.bool_ else (x != y).astype(np.float64)
                return Mismatch(
                    iteration, k, i, "values", f"{x[pos]!r} vs {y[pos]!r}" if pos else f"{x!r} vs {y!r}",
                    position=pos, max_abs_diff=float(np.nanmax(diff)) if diff.size else 0.0, operator=op,
                )
    return None
