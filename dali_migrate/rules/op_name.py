"""``fn.<op>`` -> ``ndd.<op>``, by the catalog: readers become PascalCase classes, deprecated
aliases their replacements, moved experimental operators their new place."""

from __future__ import annotations

from dali_migrate.rules.base import OpCallRule

# Why an operator with no dynamic-mode counterpart cannot be converted, and what to do instead.
_NO_COUNTERPART = {
    "python_function": "fn.python_function has no dynamic-mode counterpart: call the Python function on the batch's samples (e.g. via .torch() or numpy) in the loop",
    "dl_tensor_python_function": "fn.dl_tensor_python_function has no dynamic-mode counterpart: call the function on DLPack/torch views of the batch in the loop",
    "constant": "fn.constant has no dynamic-mode counterpart: build the value with ndd.tensor/ndd.as_batch or numpy",
    "shapes": "fn.shapes has no dynamic-mode counterpart: use the batch's .shape",
}


def _blocker(call, op, ctx):
    if op.ndd_name is not None or op.fn_name == "external_source":  # external_source: rules/external_source.py
        return None
    key = op.deprecated_alias_of or op.fn_name
    return _NO_COUNTERPART.get(
        key, f"fn.{op.fn_name} has no counterpart in dynamic mode (DALI {ctx.catalog.dali_version}): convert this pipeline by hand"
    )


def _rewrite(call, op, ctx):
    if op.ndd_name is None:
        return call
    return call.with_changes(func=ctx.ndd_attr(op.ndd_name))


RULE = OpCallRule(
    id="op-name",
    summary="fn.<op> becomes ndd.<op> (readers: ndd.readers.<Class>; deprecated and moved names resolved)",
    order=90,
    blocker=_blocker,
    rewrite=_rewrite,
)
