"""``len(tl)`` -> ``batch.batch_size``: ndd.Batch has no ``__len__``."""

import libcst as cst

from dali_migrate.rules.base import CallSiteRule

RULE = CallSiteRule(
    id="batch-len",
    summary="len(tensor_list) becomes batch.batch_size",
    receiver="batch",
    methods=("__len__",),
    rewrite=lambda call, receiver, site: cst.Attribute(value=receiver, attr=cst.Name("batch_size")),
)
