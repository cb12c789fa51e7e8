"""Operators that make a batch from nothing, and random operators, get ``batch_size=``.

In a pipeline every operator works on the pipeline's batch. In dynamic mode an operator with no
batch input makes a single sample unless told the batch size, so ``fn.random.uniform()`` would
silently become one number instead of a batch of them.
"""

from __future__ import annotations

import libcst as cst

from dali_migrate import templates
from dali_migrate.cst_util import kwarg, positional, with_kwarg
from dali_migrate.rules.base import OpCallRule


def needs_batch_size(call: cst.Call, op) -> bool:
    if op.is_reader or op.fn_name == "external_source" or kwarg(call, "batch_size") is not None:
        return False
    return op.is_random or not positional(call)


def _rewrite(call, op, ctx):
    if not needs_batch_size(call, op):
        return call
    return with_kwarg(call, "batch_size", templates.expression(ctx.batch_size))  # a name, or a fed batch's `x.batch_size`


RULE = OpCallRule(
    id="batch-size",
    summary="random operators and operators without batch inputs get batch_size= (the pipeline's batch size)",
    order=20,
    rewrite=_rewrite,
)
