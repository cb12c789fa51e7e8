"""``tl.as_cpu()`` -> ``batch.cpu()``."""

import libcst as cst

from dali_migrate.rules.base import CallSiteRule

RULE = CallSiteRule(
    id="batch-cpu",
    summary="TensorList.as_cpu() becomes Batch.cpu()",
    receiver="batch",
    methods=("as_cpu",),
    rewrite=lambda call, receiver, site: call.with_changes(func=call.func.with_changes(attr=cst.Name("cpu"))),
)
