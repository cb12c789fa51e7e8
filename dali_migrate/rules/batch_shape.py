"""``tl.shape()`` -> ``batch.shape``: a property in dynamic mode, the same list of per-sample shapes."""

from dali_migrate.rules.base import CallSiteRule

RULE = CallSiteRule(
    id="batch-shape",
    summary="TensorList.shape() becomes Batch.shape",
    receiver="batch",
    methods=("shape",),
    rewrite=lambda call, receiver, site: call.func,
)
