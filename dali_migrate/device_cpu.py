"""Move DALI code onto the CPU, for equivalence checks on machines without a GPU.

:func:`to_cpu` rewrites pipeline-mode code and converted dynamic-mode code alike:

* ``device="mixed"`` and ``device="gpu"`` (keyword arguments of any call) become ``device="cpu"``;
* ``x.gpu()`` becomes ``x`` (a DataNode's or a Batch's copy to the GPU);
* ``device_id=<expr>`` becomes ``device_id=None`` where it names the device: in ``@pipeline_def(...)``,
  in calls (pipeline constructors, ``Pipeline(...)``, ``ndd.EvalContext(...)``, converted generator
  functions) and as the default of a ``device_id`` parameter (the converted functions' settings).

Everything else stays byte-identical. Only libcst is needed (no DALI import).
"""

from __future__ import annotations

import libcst as cst

__all__ = ["to_cpu"]

_GPU_DEVICES = ("gpu", "mixed")


def _none() -> cst.Name:
    return cst.Name("None")


class _ToCpu(cst.CSTTransformer):
    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        if updated.keyword is None:
            return updated
        key = updated.keyword.value
        value = updated.value
        if key == "device" and isinstance(value, cst.SimpleString) and value.evaluated_value in _GPU_DEVICES:
            return updated.with_changes(value=cst.SimpleString(f"{value.quote}cpu{value.quote}"))
        if key == "device_id" and not (isinstance(value, cst.Name) and value.value == "None"):
            return updated.with_changes(value=_none())
        return updated

    def leave_Param(self, original: cst.Param, updated: cst.Param) -> cst.Param:
        if updated.name.value == "device_id" and updated.default is not None:
            if not (isinstance(updated.default, cst.Name) and updated.default.value == "None"):
                return updated.with_changes(default=_none())
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = updated.func
        if isinstance(func, cst.Attribute) and func.attr.value == "gpu" and not updated.args:
            # x.gpu() -> x; keep the parentheses around the receiver, if any, and the call's own.
            receiver = func.value
            if updated.lpar or updated.rpar:
                receiver = receiver.with_changes(lpar=[*updated.lpar, *receiver.lpar], rpar=[*receiver.rpar, *updated.rpar])
            return receiver
        return updated


def to_cpu(source: str) -> str:
    """``source`` with every GPU placement replaced by the CPU (see the module docstring)."""
    return cst.parse_module(source).visit(_ToCpu()).code
