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

import inspect
import re
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
        _fields[tp] = fields
    return fields


_kind: dict = {}  # type -> 1 a node to enter, 0 a node to skip, 2 a sequence, 3 anything else


def _kind_of(tp: type) -> int:
    # isinstance against libcst's abstract base classes goes through abc's slow path; the answer
    # per type never changes, so it is worked out once.
    k = _kind.get(tp)
    if k is None:
        if issubclass(tp, cst.CSTNode):
            k = 0 if issubclass(tp, _SKIPPED_TYPES) else 1
        else:
            k = 2 if issubclass(tp, (tuple, list)) else 3
        _kind[tp] = k
    return k


def children(node: cst.CSTNode) -> list:
    """The node's children that matter to the codemod, in libcst's visiting order."""
    out = []
    kinds = _kind
    for name in _fields.get(type(node)) or _child_fields(type(node)):
        value = getattr(node, name)
        k = kinds.get(type(value)) or _kind_of(type(value))
        if k == 1:
            out.append(value)
        elif k == 2:
            for v in value:
                if (kinds.get(type(v)) or _kind_of(type(v))) == 1:
                    out.append(v)
    return out


def walk(node: cst.CSTNode, *, not_into: tuple = ()) -> Iterator[cst.CSTNode]:
    """Every node under ``node`` (itself first), in pre-order; nodes of the ``not_into`` types are
    met but not entered."""
    stack = [node]
    pop, extend = stack.pop, stack.extend
    enter: dict = {}
    while stack:
        cur = pop()
        yield cur
        tp = type(cur)
        go = enter.get(tp)
        if go is None:
            go = enter[tp] = not (not_into and issubclass(tp, not_into))
        if go:
            kids = children(cur)
            if kids:
                kids.reverse()
                extend(kids)


def variables(node: cst.CSTNode) -> set:
    """The names ``node`` reads or binds (not attribute names or keywords), nested scopes included."""
    out = set()
    stack = [node]
    while stack:
        cur = stack.pop()
        tp = type(cur)
        if tp is cst.Name:
            out.add(cur.value)
        elif tp is cst.Attribute or tp is cst.Arg:  # not `x` of `a.x`, not the keyword of `f(x=1)`
            stack.append(cur.value)
        else:
            stack.extend(children(cur))
    return out


def names(node: cst.CSTNode) -> set:
    """Every identifier spelled in ``node`` (names, attributes, parameters)."""
    return {n.value for n in walk(node) if type(n) is cst.Name}
