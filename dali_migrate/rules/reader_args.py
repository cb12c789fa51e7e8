"""Reader arguments: ``name=`` is dropped (a dynamic-mode reader is an object, not looked up by
name); a shuffling reader without its own seed takes the pipeline seed, so ``seed=`` on the
pipeline still fixes the order. Sharding arguments stay as they are."""

from __future__ import annotations

import libcst as cst

from dali_migrate.cst_util import kwarg, with_kwarg, without_kwargs
from dali_migrate.rules.base import OpCallRule

_SHUFFLING = ("random_shuffle", "shuffle_after_epoch")


def _shuffles(call: cst.Call) -> bool:
    for name in _SHUFFLING:
        arg = kwarg(call, name)
        if arg is not None and not (isinstance(arg.value, cst.Name) and arg.value.value == "False"):
            return True
    return False


def _rewrite(call, op, ctx):
    call = without_kwargs(call, ["name"])
    if op.takes_seed and kwarg(call, "seed") is None and _shuffles(call):
        call = with_kwarg(call, "seed", cst.Name(ctx.seed))
    return call


RULE = OpCallRule(
    id="reader-args",
    summary="readers: name= dropped, the pipeline seed passed to shuffling readers, sharding kept",
    order=40,
    applies=lambda op: op.is_reader,
    rewrite=_rewrite,
)
