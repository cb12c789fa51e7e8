"""Reader arguments: ``name=`` is dropped (a dynamic-mode reader is an object, not looked up by
name); a shuffling reader without its own seed takes the pipeline seed, so ``seed=`` on the
pipeline still fixes the order, and a pipeline without one still shuffles differently each time
it is made (a seed drawn then, as a pipeline draws one: PipelineContext.drawn_seed). Where two
readers or more would take it, the pipeline is left to a person: its readers each drew a seed of
their own. Sharding arguments stay as they are."""

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


def _takes_pipeline_seed(call, op) -> bool:
    return op.takes_seed and kwarg(call, "seed") is None and _shuffles(call)


def _blocker(call, op, ctx):
    pipeline = getattr(ctx, "pipeline", None)
    if pipeline is None or not _takes_pipeline_seed(call, op):
        return None
    seeded = [r for r in pipeline.readers if _takes_pipeline_seed(r.call, r.op)]
    if len(seeded) < 2:
        return None
    # A pipeline gives each of them a seed of its own, drawn from its seed; the pipeline's seed on
    # each would shuffle them in step (the same order, where their sizes are equal).
    return (
        f"{len(seeded)} readers shuffle with no seed= of their own: the pipeline gives each a different seed "
        "drawn from its seed, the converted readers would all take the pipeline's seed and shuffle in step; "
        "give each reader its seed= (the same one where their samples must stay paired), then convert"
    )


def _rewrite(call, op, ctx):
    call = without_kwargs(call, ["name"])
    if _takes_pipeline_seed(call, op):
        call = with_kwarg(call, "seed", ctx.drawn_seed())
    return call


RULE = OpCallRule(
    id="reader-args",
    summary="readers: name= dropped, the pipeline seed passed to shuffling readers, sharding kept",
    order=40,
    applies=lambda op: op.is_reader,
    blocker=_blocker,
    rewrite=_rewrite,
)
