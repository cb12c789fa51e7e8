"""``tl.as_array()`` -> ``np.asarray(ndd.as_tensor(batch))``, with the file's own numpy import."""

import libcst as cst

from dali_migrate.cst_util import attr_chain
from dali_migrate.rules.base import CallSiteRule


def _rewrite(call, receiver, site):
    dense = cst.Call(func=attr_chain(f"{site.ndd}.as_tensor"), args=[cst.Arg(receiver)])
    return cst.Call(func=attr_chain(f"{site.numpy}.asarray"), args=[cst.Arg(dense)])


def _blocker(call, site):
    if site.numpy is None:
        return "TensorList.as_array(): the file does not import numpy; use numpy.asarray(ndd.as_tensor(batch))"
    return None


RULE = CallSiteRule(
    id="batch-as-array",
    summary="TensorList.as_array() becomes np.asarray(ndd.as_tensor(batch))",
    receiver="batch",
    methods=("as_array",),
    rewrite=_rewrite,
    blocker=_blocker,
)
