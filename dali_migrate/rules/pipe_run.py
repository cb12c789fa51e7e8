"""``pipe.run()`` -> ``next(pipe)``: the converted pipeline is a generator of what run() returned.

A pipeline fed from outside (``fn.external_source`` without ``source=``, see
``dali_migrate/fed_inputs.py``) becomes a function of the fed batches: ``pipe.run(name=data)``
becomes ``pipe(name=data)``, and ``pipe.feed_input("name", data)`` on the lines right above a
``pipe.run()`` moves into it (``rules/pipe_feed_input.py`` removes those lines).
"""

import libcst as cst

from dali_migrate import fed_inputs
from dali_migrate.cst_util import code
from dali_migrate.rules.base import CallSiteRule


def _fed_runs(site) -> dict:
    """id(run call as written) -> the feed_input (name, data) pairs above it, kept for the rewrite."""
    return site.__dict__.setdefault("_fed_runs", {})


def _blocker(call, site):
    receiver = code(call.func.value)
    if not fed_inputs.is_fed(site.pipeline):
        if call.args:
            return (f"{receiver}.run(...) with arguments, but {site.pipeline.name} has no external source fed from "
                    "outside (DALI raises there): convert by hand")
        return None
    fed = fed_inputs.run_feeds(call, site)
    if isinstance(fed, str):
        return fed
    _fed_runs(site)[id(call)] = fed[: len(fed) - len(call.args)]
    return None


def _rewrite(call, receiver, site):
    if not fed_inputs.is_fed(site.pipeline):
        return cst.Call(func=cst.Name("next"), args=[cst.Arg(receiver)])
    above = _fed_runs(site).get(id(call), [])
    own = [(a.keyword.value, a.value) for a in call.args]
    return fed_inputs.call_with(call, [*above, *own])


RULE = CallSiteRule(
    id="pipe-run",
    summary="pipe.run() becomes next(pipe); pipe.run(name=data) of a pipeline fed from outside becomes pipe(name=data)",
    receiver="pipeline",
    methods=("run",),
    rewrite=_rewrite,
    blocker=_blocker,
)
