"""``tl.at(i)`` and ``tl[i]`` -> ``batch.select(i)``: an ndd.Batch has no ``__getitem__`` (it raises
TypeError so that a sample index is never confused with an index inside each sample)."""

import libcst as cst

from dali_migrate.rules.base import CallSiteRule


def _rewrite(node, receiver, site):
    if isinstance(node, cst.Subscript):
        index = node.slice[0].slice.value
        return cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name("select")), args=[cst.Arg(index)])
    return node.with_changes(func=node.func.with_changes(attr=cst.Name("select")))


RULE = CallSiteRule(
    id="batch-select",
    summary="TensorList.at(i) and tl[i] become Batch.select(i)",
    receiver="batch",
    methods=("at", "__getitem__"),
    rewrite=_rewrite,
)
