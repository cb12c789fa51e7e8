"""``tl.as_array()`` -> ``np.array(ndd.as_tensor(batch))`` (numpy imported as the file does, or
added): a copy, as ``as_array()`` gives one (a change to the array must not reach the batch)."""

import libcst as cst

from dali_migrate.cst_util import attr_chain
from dali_migrate.rules.base import CallSiteRule


def _rewrite(call, receiver, site):
    dense = cst.Call(func=attr_chain(f"{site.ndd}.as_tensor"), args=[cst.Arg(receiver)])
    return cst.Call(func=attr_chain(f"{site.numpy}.array"), args=[cst.Arg(dense)])


RULE = CallSiteRule(
    id="batch-as-array",
    summary="TensorList.as_array() becomes np.array(ndd.as_tensor(batch))",
    receiver="batch",
    methods=("as_array",),
    rewrite=_rewrite,
)
