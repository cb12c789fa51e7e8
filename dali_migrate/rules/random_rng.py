"""Random operators draw from an ``ndd.random.RNG``: the pipeline's seed becomes one RNG shared
by the pipeline's random operators; an operator's own ``seed=`` becomes an RNG of its own.

Both RNGs are created once, before the loop: an RNG made inside the loop would restart the same
random sequence every iteration.

A pipeline without a seed (None, or a negative one) draws its own in C++ every time it is made;
the converted code draws one from the OS where it is made (``PipelineContext.drawn_seed``), for the
RNG and the shuffling readers alike, rather than let ndd take one from Python's global ``random``
(the RNG) or use a fixed one (a reader given seed=None shuffles the same way in every run).
An operator's own ``seed=`` that is None, or may be, falls back to the pipeline's RNG where it is
None, as the pipeline gives such an operator a seed of its own (``own_seed``).
"""

from __future__ import annotations


import libcst as cst

from dali_migrate import cst_walk, own_seed
from dali_migrate.cst_util import kwarg, names_in, with_kwarg, without_kwargs
from dali_migrate.rules.base import OpCallRule


def _blocker(call, op, ctx):
    if kwarg(call, "rng") is not None:
        return None
    seed = kwarg(call, "seed")
    if seed is not None and _repeated(call, ctx):
        # each evaluation made an operator of its own, each seeded with its seed (two with one seed
        # draw alike), and the seed may read the comprehension's variable: one RNG made before the
        # loop can be neither
        return (f"fn.{op.fn_name} with its own seed= is called in a comprehension or lambda: each evaluation was "
                "an operator with an RNG of its own; create them by hand")
    read = names_in(seed.value) - ctx.setup_names - _BUILTINS if seed is not None else set()
    if read and (ctx.pipeline is None or read & _bound_in(ctx.pipeline)):
        return f"fn.{op.fn_name}: its seed= depends on values computed per iteration; create an ndd.random.RNG for it by hand"
    return None


_REPEATING = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.Lambda)


def _repeated(call, ctx) -> bool:
    """Is ``call`` (as written) inside a comprehension or lambda of the pipeline's body?"""
    info = getattr(ctx, "pipeline", None)
    written = getattr(ctx, "call_as_written", None) or call
    if info is None:
        return False
    for stmt in info.statements:
        for node in cst_walk.walk(stmt):
            if type(node) in _REPEATING and any(n is written for n in cst_walk.walk(node)):
                return True
    return False


def _bound_in(info) -> set:
    """The names the pipeline's body binds (those it does not bind, ``self`` of the method around
    it or a module's constant, hold when the RNG is made what they held when the pipeline was)."""
    from dali_migrate.pipeline_analysis import _assigned_names

    return set().union(*(_assigned_names(s) for s in info.statements))


_BUILTINS = {"True", "False", "None", "int", "hash", "abs", "len"}


def _rewrite(call, op, ctx):
    if kwarg(call, "rng") is not None:
        return call
    seed = kwarg(call, "seed")
    if seed is None or own_seed.is_none(seed.value):
        return with_kwarg(without_kwargs(call, ["seed"]), "rng", ctx.rng())
    rng = ctx.hoist_rng("rng_" + op.fn_name.split(".")[-1], seed.value)
    return with_kwarg(without_kwargs(call, ["seed"]), "rng", rng)


RULE = OpCallRule(
    id="random-rng",
    summary="random operators get rng= (an ndd.random.RNG from the pipeline seed, or from the operator's own seed)",
    order=30,
    applies=lambda op: op.is_random,
    blocker=_blocker,
    rewrite=_rewrite,
)
