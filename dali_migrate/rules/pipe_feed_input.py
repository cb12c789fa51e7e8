"""``pipe.feed_input("name", data)`` right above ``pipe.run()`` is removed: its data moves into the
converted call, ``pipe(name=data)`` (``rules/pipe_run.py``, ``dali_migrate/fed_inputs.py``).

A feed_input anywhere else (several runs ahead, in another block, under a condition) fills DALI's
queue in a way a call per run cannot take, and is left to a person.
"""

from dali_migrate import fed_inputs
from dali_migrate.cst_util import code
from dali_migrate.rules.base import CallSiteRule


def _blocker(call, site):
    receiver = code(call.func.value)
    if not fed_inputs.is_fed(site.pipeline):
        return f"{receiver}.feed_input(...): {site.pipeline.name} has no external source fed from outside (DALI raises there): convert by hand"
    run = fed_inputs.run_of_feed(call, site)
    if run is None:
        return (f"{receiver}.feed_input(...) is not right above a {receiver}.run() of the same block: only data fed "
                "for the next run, on the lines before it, is converted (into the call): convert by hand")
    fed = fed_inputs.run_feeds(run, site)
    return fed if isinstance(fed, str) else None


RULE = CallSiteRule(
    id="pipe-feed-input",
    summary="pipe.feed_input(name, data) right above pipe.run() moves into the converted call pipe(name=data)",
    receiver="pipeline",
    methods=("feed_input",),
    rewrite=lambda call, receiver, site: None,
    blocker=_blocker,
)
