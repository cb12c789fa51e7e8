"""``device="mixed"`` -> ``device="gpu"``: dynamic mode has no "mixed" device (2.x raises
``ValueError: Invalid device type: mixed``); a GPU decoder takes CPU input there.

A device chosen at run time (``decoder_device = 'cpu' if dali_cpu else 'mixed'``, then
``device=decoder_device``: NVIDIA's ImageNet example and its many copies) keeps its choice:
a conditional expression with literal branches gets its "mixed" branch rewritten, and another
expression becomes ``"gpu" if <it> == "mixed" else <it>``, so only "mixed" is mapped and other
code that compares the variable with "mixed" is untouched. An expression that could give a
different value when evaluated twice stops the conversion.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from dali_migrate.cst_util import code, kwarg, with_kwarg
from dali_migrate.rules.base import OpCallRule


def _is_mixed(value) -> bool:
    return isinstance(value, cst.SimpleString) and value.evaluated_value == "mixed"


def _gpu_like(value: cst.SimpleString) -> cst.SimpleString:
    return cst.SimpleString(f"{value.quote}gpu{value.quote}")


def _literal_branches(value) -> Optional[cst.BaseExpression]:
    """An IfExp of string literals (nested too) with "mixed" branches rewritten, or None."""
    if isinstance(value, cst.SimpleString):
        return _gpu_like(value) if _is_mixed(value) else value
    if isinstance(value, cst.IfExp):
        body, orelse = _literal_branches(value.body), _literal_branches(value.orelse)
        if body is None or orelse is None:
            return None
        return value.with_changes(body=body, orelse=orelse)
    return None


def _dynamic(value) -> bool:
    return not isinstance(value, cst.SimpleString)


def _blocker(call, op, ctx):
    arg = kwarg(call, "device")
    if arg is None or not _dynamic(arg.value) or _literal_branches(arg.value) is not None:
        return None
    if "mixed" not in op.devices:
        return None  # this operator has no mixed backend: the value cannot be "mixed"
    from dali_migrate.rules.pipe_epoch_size import repeatable

    if not repeatable(arg.value):
        return f"device={code(arg.value)} is chosen at run time and may be \"mixed\" (no such device in dynamic mode): convert by hand"
    return None


def _rewrite(call, op, ctx):
    arg = kwarg(call, "device")
    if arg is None:
        return call
    value = arg.value
    if _is_mixed(value):
        return with_kwarg(call, "device", _gpu_like(value))
    if not _dynamic(value):
        return call
    literal = _literal_branches(value)
    if literal is not None:
        return with_kwarg(call, "device", literal) if not literal.deep_equals(value) else call
    if "mixed" not in op.devices:
        return call
    mapped = cst.IfExp(
        test=cst.Comparison(left=value, comparisons=[cst.ComparisonTarget(cst.Equal(), cst.SimpleString('"mixed"'))]),
        body=cst.SimpleString('"gpu"'),
        orelse=value,
    )
    return with_kwarg(call, "device", mapped)


RULE = OpCallRule(id="device-mixed", summary='device="mixed" becomes device="gpu" (also where the device is chosen at run time)', order=10, rewrite=_rewrite, blocker=_blocker)
