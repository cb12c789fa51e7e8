"""Reader arguments: ``name=`` is dropped (a dynamic-mode reader is an object, not looked up by
name); a shuffling reader without its own seed takes the pipeline seed, so ``seed=`` on the
pipeline still fixes the order, and a pipeline without one still shuffles differently each time
it is made (a seed drawn then, as a pipeline draws one: PipelineContext.drawn_seed). Where two
readers or more would take it, the pipeline is left to a person: its readers each drew a seed of
their own. A reader's own ``seed=`` that is None, or may be, is no seed where it is None, as in a
pipeline (``own_seed``). Sharding arguments stay as they are."""

from __future__ import annotations

import libcst as cst

from dali_migrate import own_seed
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
    """Does the reader shuffle with no seed of its own (none given, or None written out)?"""
    seed = kwarg(call, "seed")
    return op.takes_seed and (seed is None or own_seed.is_none(seed.value)) and _shuffles(call)


def _may_take_pipeline_seed(call, op) -> bool:
    """Does it shuffle with a seed of its own that may be None when the pipeline is made (``own_seed``)?"""
    seed = kwarg(call, "seed")
    return op.takes_seed and seed is not None and not own_seed.never_none(seed.value) and _shuffles(call)


def _fallback(call, op, ctx) -> cst.BaseExpression:
    """The seed the reader takes where it has none: the pipeline's seed. A pipeline gives each
    reader a seed of its own, so where several readers may take it (at most one for certain, the
    blocker sees to that; the others where their ``seed=`` is None), the k-th takes
    ``seed_or_random ^ k``: another seed, fixed by the pipeline's, as theirs were."""
    drawn = ctx.drawn_seed()
    pipeline = getattr(ctx, "pipeline", None)
    if pipeline is None:
        return drawn
    readers = [r for r in pipeline.readers if _takes_pipeline_seed(r.call, r.op)]
    readers += [r for r in pipeline.readers if _may_take_pipeline_seed(r.call, r.op)]
    k = next((i for i, r in enumerate(readers) if r.call is call), None)
    if k is None:
        k = next((i for i, r in enumerate(readers) if r.call.deep_equals(call)), 0)
    return drawn if k == 0 else cst.BinaryOperation(left=drawn, operator=cst.BitXor(), right=cst.Integer(str(k)))


def _blocker(call, op, ctx):
    pipeline = getattr(ctx, "pipeline", None)
    if _may_take_pipeline_seed(call, op):
        return own_seed.why_not(kwarg(call, "seed").value, f"fn.{op.fn_name}")
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
    given = getattr(ctx, "call_as_written", None) or call  # (to find it among the pipeline's readers)
    call = without_kwargs(call, ["name"])
    if _takes_pipeline_seed(call, op):
        call = with_kwarg(call, "seed", _fallback(given, op, ctx))
    elif _may_take_pipeline_seed(call, op):
        call = with_kwarg(call, "seed", own_seed.or_else(kwarg(call, "seed").value, _fallback(given, op, ctx)))
    return call


RULE = OpCallRule(
    id="reader-args",
    summary="readers: name= dropped, the pipeline seed passed to shuffling readers, sharding kept",
    order=40,
    applies=lambda op: op.is_reader,
    blocker=_blocker,
    rewrite=_rewrite,
)
