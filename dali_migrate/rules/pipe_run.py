"""``pipe.run()`` -> ``next(pipe)``: the converted pipeline is a generator of what run() returned."""

import libcst as cst

from dali_migrate.rules.base import CallSiteRule


def _rewrite(call, receiver, site):
    return cst.Call(func=cst.Name("next"), args=[cst.Arg(receiver)])


RULE = CallSiteRule(id="pipe-run", summary="pipe.run() becomes next(pipe)", receiver="pipeline", methods=("run",), rewrite=_rewrite)
