"""A pre-order walk of a libcst tree without libcst's visitor machinery.

``node.visit(visitor)`` rebuilds every node it passes (``_visit_and_replace_children``) even when
the visitor changes nothing, and ``node.children`` does the same; on a 300-line file one such
walk costs about as much as parsing it (issue 6). The codemod walks each file several times for
questions that need no rebuilding (which names occur, which node is whose parent), so it reads
the dataclass fields directly instead.

The order of a node's children is libcst's own: it is read once per node type from the calls in
that type's ``_visit_and_replace_children`` (``visit_required(self, "value", ...)`` and the
like), so a walk here meets nodes in the same order as a ``CSTVisitor`` does. Whitespace fields
(and parentheses, commas and other punctuation) are not entered: nothing the codemod asks about
lives there, and they are about half of all nodes.
"""

from __future__ import annotations

import collections.abc
import inspect
import re
import typing
from typing import Iterator

import libcst as cst

_VISIT_CALL = re.compile(r'visit_[a-z_]+\(\s*self\s*,\s*"(\w+)"')
_SKIPPED_TYPES = (
    cst.SimpleWhitespace, cst.ParenthesizedWhitespace, cst.TrailingWhitespace, cst.Newline,
    cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket,
    cst.LeftCurlyBrace, cst.RightCurlyBrace, cst.Comma, cst.Dot, cst.Colon, cst.Semicolon,
    cst.AssignEqual, cst.ImportStar,
)
_fields: dict = {}  # node type -> field names holding children, in visiting order


def _child_fields(tp: type) -> tuple:
    fields = _fields.get(tp)
    if fields is None:
        # tests/test_cst_walk.py checks the result against libcst's own visitor on real code
        fields = tuple(dict.fromkeys(_VISIT_CALL.findall(inspect.getsource(tp._visit_and_replace_children))))
        hints = _type_hints(tp)
        # fields that only ever hold whitespace or punctuation (``lpar``, ``comma``...) are not
        # read at all: they are most of a node's fields
        fields = tuple(f for f in fields if not (f in hints and _never_entered(hints[f])))
        _fields[tp] = fields
    return fields


def _type_hints(tp: type) -> dict:
    try:
        return typing.get_type_hints(tp)
    except Exception:  # an annotation that does not resolve: every field is read
        return {}


def _never_entered(hint) -> bool:
    """Whether a field annotated ``hint`` can only hold what the walk does not enter."""
    origin = typing.get_origin(hint)
    if origin is typing.Union:
        return all(_never_entered(h) for h in typing.get_args(hint))
    if origin in (collections.abc.Sequence, list, tuple):
        args = [a for a in typing.get_args(hint) if a is not Ellipsis]
        return bool(args) and all(_never_entered(a) for a in args)
    if not isinstance(hint, type):
        return False  # a form this does not know: the field is read
    if hint is type(None) or hint is cst.MaybeSentinel:
        return True
    # libcst's base of SimpleWhitespace and ParenthesizedWhitespace, both skipped (its
    # __subclasses__() cannot say so: add_slots leaves the classes it replaced listed there)
    return issubclass(hint, (*_SKIPPED_TYPES, cst.BaseParenthesizableWhitespace))


_kind: dict = {}  # type -> 1 a node to enter, 2 a sequence, 0 anything else (a node to skip, None...)


def _kind_of(tp: type) -> int:
    # isinstance against libcst's abstract base classes goes through abc's slow path; the answer
    # per type never changes, so it is worked out once.
    k = _kind.get(tp)
    if k is None:
        if issubclass(tp, cst.CSTNode):
            k = 0 if issubclass(tp, _SKIPPED_TYPES) else 1
        else:
            k = 2 if issubclass(tp, (tuple, list)) else 0
        _kind[tp] = k
    return k


def children(node: cst.CSTNode) -> list:
    """The node's children that matter to the codemod, in libcst's visiting order."""
    out = []
    kinds = _kind
    tp = type(node)
    fields = _fields.get(tp)
    if fields is None:
        fields = _child_fields(tp)
    for name in fields:
        value = getattr(node, name)
        k = kinds.get(type(value))
        if k is None:
            k = _kind_of(type(value))
        if k == 1:
            out.append(value)
        elif k == 2:
            for v in value:
                kv = kinds.get(type(v))
                if kv is None:
                    kv = _kind_of(type(v))
                if kv == 1:
                    out.append(v)
    return out


def walk(node: cst.CSTNode, *, not_into: tuple = ()) -> Iterator[cst.CSTNode]:
    """Every node under ``node`` (itself first), in pre-order; nodes of the ``not_into`` types are
    met but not entered."""
    stack = [node]
    pop, push = stack.pop, stack.append
    kinds, backwards = _kind, _reversed_fields
    enter: dict = {}
    while stack:
        cur = pop()
        yield cur
        tp = type(cur)
        if not_into:
            go = enter.get(tp)
            if go is None:
                go = enter[tp] = not issubclass(tp, not_into)
            if not go:
                continue
        # children() inlined, pushed last first so that the first is met next: this loop is
        # what every walk of the codemod spends its time in
        fields = backwards.get(tp)
        if fields is None:
            fields = backwards[tp] = _child_fields(tp)[::-1]
        for name in fields:
            value = getattr(cur, name)
            k = kinds.get(type(value))
            if k is None:
                k = _kind_of(type(value))
            if k == 1:
                push(value)
            elif k == 2:
                for v in reversed(value):
                    kv = kinds.get(type(v))
                    if kv is None:
                        kv = _kind_of(type(v))
                    if kv == 1:
                        push(v)


_reversed_fields: dict = {}  # node type -> _child_fields(type), last first


def variable_nodes(node: cst.CSTNode) -> list:
    """The Name nodes in ``node`` that read or bind a variable (not attribute names or keywords),
    nested scopes included."""
    out = []
    stack = [node]
    while stack:
        cur = stack.pop()
        tp = type(cur)
        if tp is cst.Name:
            out.append(cur)
        elif tp is cst.Attribute or tp is cst.Arg:  # not `x` of `a.x`, not the keyword of `f(x=1)`
            stack.append(cur.value)
        else:
            stack.extend(children(cur))
    return out


def variables(node: cst.CSTNode) -> set:
    """The names ``node`` reads or binds (not attribute names or keywords), nested scopes included."""
    return {n.value for n in variable_nodes(node)}


def names(node: cst.CSTNode) -> set:
    """Every identifier spelled in ``node`` (names, attributes, parameters)."""
    out = set()
    stack = [node]
    while stack:
        cur = stack.pop()
        if type(cur) is cst.Name:
            out.add(cur.value)  # a Name's only children are parentheses
        else:
            stack.extend(children(cur))
    return out
