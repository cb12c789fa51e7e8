"""An operator given a list of DALI data as one input (an "input set") stops the conversion.

In pipeline mode ``fn.pad([a, b], fill_value=255)`` (DALI's resize notebook) or
``fn.slice([img, lbl], anchor, shape)`` (nnUNet's loaders) applies the operator to each item of
the list and gives a list of results. Dynamic mode has no input sets: ``ndd.pad([a, b])`` raises
(``TypeError: Unexpected element type ... Batch``), so the converted loop would fail where the
pipeline ran. A list of Python values as an input (``fn.slice(images, [0.1, 0.2], [0.5, 0.5])``,
a constant) is not a set and converts.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from dali_migrate.rules.base import OpCallRule

_SEQUENCES = (cst.List, cst.Tuple, cst.ListComp)


def _holds_data(seq, ctx, data: set) -> bool:
    from dali_migrate import cst_walk
    from dali_migrate.rules.data_subscript import _is_data

    if isinstance(seq, cst.ListComp):
        return _is_data(seq.elt, ctx.names, data) or any(
            type(n) is cst.Call and ctx.names.fn_op(n.func) is not None for n in cst_walk.walk(seq.elt))
    return any(isinstance(el, cst.Element) and _is_data(el.value, ctx.names, data) for el in seq.elements)


def _bound_before(info, name: str, call):
    """The value of the last top-level ``name = value`` of the pipeline before the statement that
    holds ``call`` (``out = [...]`` then ``out = fn.pad(out)``); None where another kind of
    statement binds it in between, or none does."""
    from dali_migrate import cst_walk
    from dali_migrate.pipeline_analysis import _assigned_names

    value = None
    for stmt in info.statements:
        if any(n is call for n in cst_walk.walk(stmt)):
            return value
        if name not in _assigned_names(stmt):
            continue
        small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        simple = (isinstance(small, cst.Assign) and len(small.targets) == 1
                  and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == name)
        value = small.value if simple else None
    return None


def _sequence_names(info) -> set:
    """Names some top-level ``name = [...]`` of the pipeline binds (the only ones _bound_before
    can find a sequence for)."""
    return {
        small.targets[0].target.value
        for stmt in info.statements if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
        for small in stmt.body if isinstance(small, cst.Assign) and len(small.targets) == 1
        and isinstance(small.targets[0].target, cst.Name) and isinstance(small.value, _SEQUENCES)
    }


def _blocker(call, op, ctx) -> Optional[str]:
    info = getattr(ctx, "pipeline", None)
    if info is None:
        return None
    # (asked for every operator call: what is walked once per pipeline is kept)
    state = ctx.rule_state.get(RULE.id)
    if state is None:
        state = ctx.rule_state[RULE.id] = {"sequences": _sequence_names(info)}
    for arg in call.args:
        if arg.keyword is not None or arg.star:
            continue
        value = arg.value
        seq = value if isinstance(value, _SEQUENCES) else None
        if seq is None and isinstance(value, cst.Name) and value.value in state["sequences"]:
            bound = _bound_before(info, value.value, call)
            seq = bound if isinstance(bound, _SEQUENCES) else None
        if seq is None:
            continue
        if "data" not in state:
            from dali_migrate.rules.data_subscript import data_names

            state["data"] = set().union(*data_names(info, ctx.names))
        if _holds_data(seq, ctx, state["data"]):
            return (f"fn.{op.fn_name} is given a list of DALI data as one input (`{cst.Module([]).code_for_node(value)}`): "
                    f"the pipeline applied it to each item (input sets), dynamic mode takes one batch per input and "
                    f"raises on a list; call it on each item (`[ndd.{op.fn_name}(x, ...) for x in items]`) by hand")
    return None


RULE = OpCallRule(
    id="input-sets",
    summary="an operator given a list of DALI data as one input (input sets) stops the conversion, named",
    order=2,
    blocker=_blocker,
)
