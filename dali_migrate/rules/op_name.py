"""``fn.<op>`` -> ``ndd.<op>``, by the catalog: readers become PascalCase classes, deprecated
aliases their replacements, moved experimental operators their new place. Arguments only a
pipeline's graph takes (``name=``, ``preserve=``, ``bytes_per_sample_hint=``) are dropped."""

from __future__ import annotations

from dali_migrate.cst_util import without_kwargs
from dali_migrate.rules.base import OpCallRule

# Why an operator with no dynamic-mode counterpart cannot be converted, and what to do instead.
_NO_COUNTERPART = {
    "dl_tensor_python_function": "fn.dl_tensor_python_function has no dynamic-mode counterpart: call the function on DLPack/torch views of the batch in the loop",
}

# Operators without an ndd counterpart that a rule of their own rewrites (and blocks where it cannot).
_OWN_RULE = {
    "external_source": "rules/external_source.py",
    "constant": "rules/constant.py",
    "shapes": "rules/shapes.py",
    "python_function": "rules/python_function.py",
}


def _blocker(call, op, ctx):
    if op.ndd_name is not None or op.fn_name in _OWN_RULE:
        return None
    key = op.deprecated_alias_of or op.fn_name
    return _NO_COUNTERPART.get(
        key, f"fn.{op.fn_name} has no counterpart in dynamic mode (DALI {ctx.catalog.dali_version}): convert this pipeline by hand"
    )


# Arguments of a pipeline's graph, not of the operator: dynamic mode's operators take none of them
# (TypeError: unexpected keyword argument). `name=` tags a node (readers: rules/reader_args.py),
# `preserve=True` keeps an unused operator from being pruned (every call runs in dynamic mode),
# `bytes_per_sample_hint=` sizes the pipeline's buffers.
_GRAPH_ONLY = ("name", "preserve", "bytes_per_sample_hint")


def _rewrite(call, op, ctx):
    if op.ndd_name is None:
        return call
    return without_kwargs(call, _GRAPH_ONLY).with_changes(func=ctx.ndd_attr(op.ndd_name))


RULE = OpCallRule(
    id="op-name",
    summary="fn.<op> becomes ndd.<op> (readers: ndd.readers.<Class>; deprecated and moved names resolved)",
    order=90,
    blocker=_blocker,
    rewrite=_rewrite,
)
