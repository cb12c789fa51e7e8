"""``x[...]`` on DALI data inside a pipeline -> ``x.slice[...]``.

In a pipeline, subscripting a DataNode slices every sample (``images[10:20, 5:15]`` crops each
image); an ``ndd.Batch`` cannot be subscripted (``TypeError``) and spells the same per-sample
slicing ``batch.slice[...]``. The value must be seen to be DALI data: an operator's result, or a
name only ever assigned such results in the pipeline. An operator of several outputs gives a
list (``output = fn.readers.file(...)``; in the converted loop the tuple next_epoch yields):
``output[1]`` picks an item and stays as it is. A subscript of a per-iteration name that may hold
something else stops the conversion with a marker.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from dali_migrate import cst_walk
from dali_migrate.rules.base import Rule


def _assignments(info):
    for stmt in info.statements:
        for node in cst_walk.walk(stmt, not_into=(cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            # type(), not isinstance(): these classes have no subclasses, and isinstance against
            # libcst's abstract-base classes takes abc's slow path for every node of the pipeline
            tp = type(node)
            if tp is cst.Assign:
                yield [t.target for t in node.targets], node.value
            elif (tp is cst.AugAssign or tp is cst.AnnAssign) and node.value is not None:
                yield [node.target], node.value
            elif tp is cst.For:
                yield [node.target], None  # a loop variable: not known to be data


def _target_names(target) -> list:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for el in target.elements for n in _target_names(el.value)]
    return []


def _is_data(expr, names, data: set) -> bool:
    """Is ``expr`` a DataNode: an operator's result, arithmetic on one, or a name known to hold
    one? Containers and other calls are not (``[a, b][0]`` picks a list element)."""
    if isinstance(expr, cst.Name):
        return expr.value in data
    if isinstance(expr, cst.Call):
        op = names.fn_op(expr.func)
        if op is not None:
            # the TFRecord reader gives a dict of DataNodes, an operator of several outputs a list
            return "tfrecord" not in op and not _several_outputs(expr, op)
        q = names.qualify(expr.func) or ""
        if q.startswith("nvidia.dali.math."):
            return True
        return (isinstance(expr.func, cst.Attribute) and expr.func.attr.value in ("gpu", "cpu")
                and _is_data(expr.func.value, names, data))
    if isinstance(expr, cst.BinaryOperation):
        return _is_data(expr.left, names, data) or _is_data(expr.right, names, data)
    if isinstance(expr, cst.UnaryOperation):
        return _is_data(expr.expression, names, data)
    if isinstance(expr, cst.Comparison):
        return _is_data(expr.left, names, data) or any(_is_data(c.comparator, names, data) for c in expr.comparisons)
    if isinstance(expr, cst.Subscript):
        return _is_data(expr.value, names, data)
    return False


def _several_outputs(call: cst.Call, op: str) -> bool:
    """Does this operator call give a list of outputs (a reader's `output = fn.readers.video(...)`)?"""
    from dali_migrate import catalog
    from dali_migrate.pipeline_analysis import _call_outputs, reader_outputs

    info = catalog.load().fn(op)
    if info is None:
        return False
    n = reader_outputs(call, info) if info.is_reader else _call_outputs(call, info)
    return n is not None and n > 1


def _output_lists(assigns: list, names) -> set:
    """Names only ever bound, whole, to the list of outputs of one operator call."""
    lists, other = set(), set()
    for targets, value in assigns:
        several = _several_call(value, names)
        for t in targets:
            (lists if several and isinstance(t, cst.Name) else other).update(_target_names(t))
    return lists - other


def _list_item(sub: cst.Subscript, lists: set) -> bool:
    """``output[1]`` on such a list: an item (the tuple next_epoch yields has the same ones)."""
    return (isinstance(sub.value, cst.Name) and sub.value.value in lists and len(sub.slice) == 1
            and isinstance(sub.slice[0].slice, cst.Index) and isinstance(sub.slice[0].slice.value, cst.Integer))


def data_names(info, names, assigns: Optional[list] = None) -> tuple:
    """(names only ever bound to DALI data in the pipeline, names bound to data and to other values).

    ``assigns``: ``list(_assignments(info))``, where the caller has it already."""
    if assigns is None:
        assigns = list(_assignments(info))
    data: set = set()

    def bound_to_data(target, value) -> bool:
        # an operator's list of outputs unpacked (`jpegs, labels = fn.readers.file(...)`) gives data
        if isinstance(target, (cst.Tuple, cst.List)) and _several_call(value, names):
            return True
        return _is_data(value, names, data)

    changed = True
    while changed:
        changed = False
        for targets, value in assigns:
            if value is None:
                continue
            for t in targets:
                if bound_to_data(t, value):
                    for n in _target_names(t):
                        if n not in data:
                            data.add(n)
                            changed = True
    mixed = {
        n for targets, value in assigns for t in targets if value is None or not bound_to_data(t, value)
        for n in _target_names(t) if n in data
    }
    return data - mixed, mixed


def _several_call(value, names) -> bool:
    op = names.fn_op(value.func) if isinstance(value, cst.Call) else None
    return op is not None and _several_outputs(value, op)


def _subscripts(info):
    roots = [*info.statements, *([info.returned] if info.returned is not None else [])]
    for root in roots:
        for node in cst_walk.walk(root, not_into=(cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            if type(node) is cst.Subscript:  # (see _assignments)
                yield node


def blocker(info, names) -> Optional[str]:
    subscripts = list(_subscripts(info))
    if not subscripts:  # most pipelines index nothing: their data need not be followed
        return None
    assigns = list(_assignments(info))
    data, mixed = data_names(info, names, assigns)
    per_iteration = _per_iteration_names(assigns, info)
    lists = _output_lists(assigns, names)
    for sub in subscripts:
        if _is_data(sub.value, names, data) or _by_key(sub) or _list_item(sub, lists):
            continue
        used = cst_walk.names(sub.value)
        if used & mixed or (used - info.setup_names - data) & per_iteration:
            return (f"`{cst.Module([]).code_for_node(sub)}`: cannot tell whether this indexes DALI data "
                    "(per-sample slicing, `.slice[...]` in dynamic mode) or a Python value: convert by hand")
    return None


def _per_iteration_names(assigns: list, info) -> set:
    return {n for targets, _ in assigns for t in targets for n in _target_names(t)} - info.setup_names


def subscripts_to_rewrite(info, names) -> set:
    """ids of the Subscript nodes (as written) that slice DALI data."""
    subscripts = list(_subscripts(info))
    if not subscripts:
        return set()
    data, _ = data_names(info, names)
    return {id(sub) for sub in subscripts if _is_data(sub.value, names, data) and not _by_key(sub)}


def _by_key(sub: cst.Subscript) -> bool:
    """``x["key"]``: a dict lookup (a TFRecord reader's features), never per-sample slicing."""
    return any(isinstance(el.slice, cst.Index) and isinstance(el.slice.value, (cst.SimpleString, cst.ConcatenatedString))
               for el in sub.slice)


def rewrite(updated: cst.Subscript) -> cst.Subscript:
    return updated.with_changes(value=cst.Attribute(value=updated.value, attr=cst.Name("slice")))


RULE = Rule(
    id="data-subscript",
    summary="x[...] on DALI data in a pipeline becomes x.slice[...] (per-sample slicing on an ndd.Batch)",
    order=95,
)
