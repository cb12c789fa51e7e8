"""``tl.as_tensor()`` -> ``ndd.as_tensor(batch)``: a uniform batch as one dense tensor."""

import libcst as cst

from dali_migrate.cst_util import attr_chain
from dali_migrate.rules.base import CallSiteRule


def _rewrite(call, receiver, site):
    return cst.Call(func=attr_chain(f"{site.ndd}.as_tensor"), args=[cst.Arg(receiver)])


RULE = CallSiteRule(
    id="batch-as-tensor",
    summary="TensorList.as_tensor() becomes ndd.as_tensor(batch)",
    receiver="batch",
    methods=("as_tensor",),
    rewrite=_rewrite,
)
