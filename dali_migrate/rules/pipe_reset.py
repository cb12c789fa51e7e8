"""``pipe.reset()`` is removed where it changes nothing the pipeline gives.

DALI 2.4's ``Pipeline.reset()`` does something only after an external source raised
StopIteration, and then only to sources that can give data again: callables (from iteration 0),
cycled and parallel sources, an ``iter_setup()``. A pipeline without external sources (a reader
never ends a ``run()``), or whose sources are generator functions DALI called once (a spent
generator stays spent), gives the same batches with or without it: benchmark loops that call
``pipe.reset()`` after each epoch of an endless generator (DALI's conv_perf notebook) lose
nothing. Elsewhere the converted generator, which ends where the pipeline raised StopIteration,
cannot start again as ``reset()`` started the pipeline: marked
(``rules/external_source.py``'s ``reset_blocker`` says why).
"""

from __future__ import annotations

from dali_migrate.rules.base import CallSiteRule


def _blocker(call, site):
    from dali_migrate.rules.external_source import reset_blocker

    if call.args:
        return "pipe.reset() with arguments (DALI's takes none): convert by hand"
    module = site.parents.order[0] if site.parents is not None and site.parents.order else None
    reason = reset_blocker(site.pipeline, module)
    if reason:
        return f"pipe.reset() of {site.pipeline.name}: {reason}: convert by hand"
    return None


RULE = CallSiteRule(
    id="pipe-reset",
    summary="pipe.reset() is removed where the pipeline's sources cannot start again (none, or generator functions)",
    receiver="pipeline",
    methods=("reset",),
    blocker=_blocker,
    rewrite=lambda call, receiver, site: None,
)
