"""Helper calls inside a statement's expression, taken out so that they can be inlined.

``legacy._inline_helpers`` writes a helper's statements in place of a call that is a statement of
its own (``x = helper(...)``, ``return helper(...)``). Real pipelines also call helpers inside an
expression: ``return decode_augment(images, seed=seed), labels`` (DALI's webdataset notebook),
``audio_len = div_ceil(shape, n) + 1``. Such a call is taken out into a statement of its own
before the one that holds it::

    return decode_augment(img, seed=seed), label
    ->  decode_augment_result = decode_augment(img, seed=seed)
        return decode_augment_result, label

which the inlining then handles; the temporary is then put back in place of the call where that
keeps the order (:func:`fold`): ``return img_2, label``.

That is Python's own order only where nothing the statement evaluates before the call has an
effect or can see the call's: every part evaluated before it (the earlier elements of a tuple, the
function and earlier arguments of a call that encloses it, the left operand of an operator...) must
be a name, an attribute of one or a literal, and the call must be evaluated whatever happens (not
in a lambda, a comprehension, a conditional expression or the right of ``and``/``or``). Several
calls are taken out in the order Python evaluates them. A call that is not in such a place stays
where it is (``hoist`` answers None) and the caller says why.
"""

from __future__ import annotations

from typing import Callable, Optional

import libcst as cst

from dali_migrate import cst_walk
from dali_migrate.cst_util import assignment, fresh_name

#: nodes a call's value passes through unchanged on its way up to the statement
_THROUGH = (cst.Element, cst.Arg, cst.Index, cst.SubscriptElement, cst.Attribute, cst.UnaryOperation)
_LITERALS = (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis)


def _pure(expr) -> bool:
    """Evaluating ``expr`` has no effect and gives the same whenever the statement evaluates it."""
    if isinstance(expr, (cst.Name, *_LITERALS)):
        return True
    if isinstance(expr, cst.Attribute):
        return _pure(expr.value)
    if isinstance(expr, (cst.Tuple, cst.List)):
        return all(isinstance(e, cst.Element) and _pure(e.value) for e in expr.elements)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        return isinstance(expr.expression, (cst.Integer, cst.Float))
    return False


def _path(root, target) -> Optional[list]:
    """[root, ..., target]: the nodes from ``root`` down to ``target`` (by identity)."""
    stack = [(root, [root])]
    while stack:
        node, path = stack.pop()
        if node is target:
            return path
        for child in cst_walk.children(node):
            stack.append((child, [*path, child]))
    return None


def _before(parent, child) -> Optional[list]:
    """What ``parent`` evaluates before ``child`` (always, and ``child`` always); None where
    ``child`` is evaluated only sometimes or the order is not one this module follows."""
    if isinstance(parent, _THROUGH):
        if isinstance(parent, cst.Arg) and parent.star:
            return None  # `*helper(x)`: iterating the result is more than using it
        return []
    if isinstance(parent, (cst.Tuple, cst.List)):
        elements = list(parent.elements)
        if not isinstance(child, cst.Element):
            return None
        return [e.value if isinstance(e, cst.Element) else e for e in elements[: elements.index(child)]]
    if isinstance(parent, cst.Call):
        if child is parent.func:
            return []  # `helper(x).gpu()`: the function is evaluated before the arguments
        args = list(parent.args)
        if child not in args:
            return None
        return [parent.func, *args[: args.index(child)]]
    if isinstance(parent, cst.BinaryOperation):
        return [] if child is parent.left else [parent.left]
    if isinstance(parent, cst.Comparison):
        if child is parent.left:
            return []
        if parent.comparisons and child is parent.comparisons[0]:
            return [parent.left]  # later comparators are evaluated only while the chain holds
        return None
    if isinstance(parent, cst.ComparisonTarget):
        return [] if child is parent.comparator else None
    if isinstance(parent, cst.Subscript):
        return [] if child is parent.value else [parent.value]
    if isinstance(parent, (cst.Return, cst.Expr)):
        return []
    if isinstance(parent, cst.Assign):
        return [] if child is parent.value else None  # a call in a target runs after the value
    if isinstance(parent, cst.AugAssign):
        return [parent.target] if child is parent.value else None
    return None


def _first_call(node, is_helper: Callable) -> Optional[cst.Call]:
    """The helper call Python completes first in ``node`` (its arguments before it, left to right)."""
    for child in cst_walk.children(node):
        found = _first_call(child, is_helper)
        if found is not None:
            return found
    return node if isinstance(node, cst.Call) and is_helper(node) else None


def hoist(stmt, is_helper: Callable, used: set, base: Callable) -> Optional[tuple]:
    """([``tmp = helper(...)``, ..., ``stmt`` reading the temporaries], {temporaries}) for a simple
    statement whose helper calls (``is_helper(call)``) are all in places where taking them out
    keeps Python's order; None otherwise. ``base(call)``: the name a call's temporary is made from."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
        return None
    small = stmt.body[0]
    if not isinstance(small, (cst.Assign, cst.AugAssign, cst.Return, cst.Expr)):
        return None
    out: list = []
    temps: set = set()
    while True:
        call = _first_call(small, is_helper)
        if call is None:
            break
        path = _path(small, call)
        for parent, child in zip(path, path[1:]):
            before = _before(parent, child)
            if before is None or not all(_pure(b.value if isinstance(b, cst.Arg) else b) for b in before):
                return None
        temp = fresh_name(base(call), used)
        temps.add(temp)
        out.append(assignment(temp, call))
        small = small.deep_replace(call, cst.Name(temp))
    if not out:
        return None
    out[0] = out[0].with_changes(leading_lines=stmt.leading_lines)
    out.append(stmt.with_changes(body=[small], leading_lines=[]))
    return out, temps


def _binds(stmt, names: set) -> bool:
    from dali_migrate.pipeline_analysis import _assigned_names

    return bool(_assigned_names(stmt) & names)


def _variables(expr) -> set:
    """The variables a pure expression reads (not attribute names)."""
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    if isinstance(expr, cst.Name):
        return {expr.value}
    if isinstance(expr, (cst.Tuple, cst.List)):
        return set().union(*(_variables(e.value) for e in expr.elements))
    return set()


def fold(stmts: list, temps: set) -> list:
    """``stmts`` with each ``tmp = value`` of a temporary written where the one read of the
    temporary is: where that read comes right after it (the statement the call was taken out of:
    everything it evaluates before the read has no effect), or where the value is a name or a
    literal that nothing in between binds."""
    stmts = list(stmts)
    for temp in sorted(temps):
        at = next((i for i, s in enumerate(stmts) if _assigns_temp(s, temp)), None)
        if at is None:
            continue
        value = stmts[at].body[0].value
        reads = [(i, n) for i, s in enumerate(stmts) if i != at
                 for n in cst_walk.variable_nodes(s) if n.value == temp]
        if len(reads) != 1 or reads[0][0] < at:
            continue
        where, name = reads[0]
        if where != at + 1:
            # statements in between (a later helper's) run before the read: only a value they
            # cannot change may wait until then
            if not _pure(value) or any(_binds(s, _variables(value) | {temp}) for s in stmts[at + 1 : where]):
                continue
        path = _path(stmts[where], name)
        loose = isinstance(path[-2], (cst.Element, cst.Arg, cst.Index, cst.Assign, cst.Return))
        value = value.deep_clone()
        # where the name was an element, an argument or an index, only a tuple needs parentheses
        if not loose or isinstance(value, cst.Tuple):
            value = _atom(value)
        stmts[where] = stmts[where].deep_replace(name, value)
        lines = stmts[at].leading_lines
        del stmts[at]
        if lines:
            stmts[at] = stmts[at].with_changes(leading_lines=[*lines, *stmts[at].leading_lines])
    return stmts


_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.List, cst.Dict, cst.Set, *_LITERALS)


def _atom(expr):
    """``expr`` as it may stand where a name stood: in parentheses unless it binds tightest."""
    if isinstance(expr, _ATOMS) or expr.lpar:
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _assigns_temp(stmt, temp: str) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Assign)
        and len(stmt.body[0].targets) == 1
        and isinstance(stmt.body[0].targets[0].target, cst.Name)
        and stmt.body[0].targets[0].target.value == temp
    )
