"""``device="mixed"`` -> ``device="gpu"``: dynamic mode has no "mixed" device (2.x raises
``ValueError: Invalid device type: mixed``); a GPU decoder takes CPU input there."""

from __future__ import annotations

import libcst as cst

from dali_migrate.cst_util import kwarg, with_kwarg
from dali_migrate.rules.base import OpCallRule


def _is_mixed(call: cst.Call) -> bool:
    arg = kwarg(call, "device")
    return arg is not None and isinstance(arg.value, cst.SimpleString) and arg.value.evaluated_value == "mixed"


def _rewrite(call, op, ctx):
    if not _is_mixed(call):
        return call
    quote = kwarg(call, "device").value.quote
    return with_kwarg(call, "device", cst.SimpleString(f"{quote}gpu{quote}"))


RULE = OpCallRule(id="device-mixed", summary='device="mixed" becomes device="gpu"', order=10, rewrite=_rewrite)
