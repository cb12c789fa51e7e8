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
import contextlib
import inspect
import re
import typing
from typing import Iterator, Optional

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


def _kids(node: cst.CSTNode) -> tuple:
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
    return tuple(out)


# During one conversion (engine.convert_source) the children of every node walked are kept:
# each file is walked many times over (issue 6), and a libcst node never changes. An entry holds
# its node, so no other node can take that id while the cache lives; the cache is dropped when
# the conversion ends.
_cache: Optional[dict] = None  # id(node) -> (node, its children)
_memo: Optional[dict] = None  # (what, id(node)) -> (node, answer): see remembered()


@contextlib.contextmanager
def caching():
    """Keep the children of the nodes walked, and what :func:`remembered` computes, until the block
    ends (nested blocks share one cache)."""
    global _cache, _memo
    if _cache is not None:
        yield
        return
    _cache, _memo = {}, {}
    try:
        yield
    finally:
        _cache = _memo = None


def remembered_with(compute, node, *others):
    """``compute(node, *others)``, computed once per node and the objects ``others`` are while
    :func:`caching` is on (the same conditions as :func:`remembered`; ``others`` are kept with the
    answer, so their ids stay their own while it lives)."""
    memo = remembered(_new_memo, node, key=compute)
    key = tuple(map(id, others))
    hit = memo.get(key)
    if hit is None or any(a is not b for a, b in zip(hit[0], others)):
        hit = memo[key] = (others, compute(node, *others))
    return hit[1]


def _new_memo(_node) -> dict:
    return {}


def remembered(compute, node, key=None):
    """``compute(node)``, computed once per node while :func:`caching` is on (``compute`` must
    depend on the node alone, or on what stays the same for the whole conversion, and its answer
    must not be changed by callers). ``key`` names the computation when ``compute`` is made anew
    for each call (a closure)."""
    memo = _memo
    if memo is None:
        return compute(node)
    key = (key or compute, id(node))
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = (node, compute(node))
    return hit[1]


def children(node: cst.CSTNode) -> list:
    """The node's children that matter to the codemod, in libcst's visiting order."""
    return list(children_tuple(node))


def cache_lookup():
    """``get(id(node))`` -> None or (node, :func:`children_tuple` of it), for loops that inline
    :func:`children_tuple`'s cache hit (a function call per node costs as much as the lookup)."""
    return _cache.get if _cache is not None else _NO_CACHE.get


_NO_CACHE: dict = {}


def children_tuple(node: cst.CSTNode) -> tuple:
    """:func:`children`, as a tuple the caller must not keep past the conversion."""
    cache = _cache
    if cache is None or not _fields.get(type(node), True):  # (a leaf by type: nothing to keep)
        return _kids(node)
    hit = cache.get(id(node))
    if hit is None:
        hit = cache[id(node)] = (node, _kids(node))
    return hit[1]


_entered: dict = {}  # not_into -> {type: whether walk enters its nodes} (issubclass on libcst's ABCs is slow)


def walk(node: cst.CSTNode, *, not_into: tuple = ()) -> Iterator[cst.CSTNode]:
    """Every node under ``node`` (itself first), in pre-order; nodes of the ``not_into`` types are
    met but not entered."""
    # outside a conversion the children are kept for this walk only
    cache = _cache if _cache is not None else {}
    stack = [node]
    pop, push, get = stack.pop, stack.extend, cache.get
    fields_of = _fields
    enter = _entered.get(not_into) if not_into else None
    if enter is None and not_into:
        enter = _entered[not_into] = {}
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
        fields = fields_of.get(tp)
        if fields is None:
            fields = _child_fields(tp)
        if not fields:  # a leaf by type (a name, a number...): most nodes
            continue
        hit = get(id(cur))
        if hit is None:
            hit = cache[id(cur)] = (cur, _kids(cur))
        push(reversed(hit[1]))  # last first, so that the first is met next


def holding(roots, wanted, not_into: tuple = ()) -> set:
    """ids of the nodes under ``roots`` that have a node ``wanted(node)`` below them (nodes of the
    ``not_into`` types are not entered): what a transformer that changes only wanted nodes must
    enter, its ``on_leave`` still running for their children. Parents are kept per place in the
    walk, not per node: a node that occurs twice in a tree (a copied statement) is entered at both
    places, as a full pass would."""
    enter: set = set()
    skip: dict = {}  # type -> whether it is one of not_into (isinstance on libcst's bases is slow)
    for root in roots:
        nodes = [root]  # every place met, breadth first
        up = [-1]  # per place: the place of its parent
        marked: set = set()  # places already known to lead to a wanted node
        i = 0
        while i < len(nodes):
            node = nodes[i]
            if wanted(node):
                j = up[i]
                while j >= 0 and j not in marked:
                    marked.add(j)
                    enter.add(id(nodes[j]))
                    j = up[j]
            tp = type(node)
            out = skip.get(tp)
            if out is None:
                out = skip[tp] = issubclass(tp, not_into)
            if not out:
                kids = children(node)
                if kids:
                    nodes.extend(kids)
                    up.extend([i] * len(kids))
            i += 1
    return enter


def variable_nodes(node: cst.CSTNode) -> list:
    """The Name nodes in ``node`` that read or bind a variable (not attribute names or keywords),
    nested scopes included."""
    out = []
    stack = [node]
    pop, push = stack.pop, stack.extend
    get, fields_of = cache_lookup(), _fields
    Name, Attribute, Arg = cst.Name, cst.Attribute, cst.Arg
    while stack:
        cur = pop()
        tp = type(cur)
        if tp is Name:
            out.append(cur)
        elif tp is Attribute or tp is Arg:  # not `x` of `a.x`, not the keyword of `f(x=1)`
            stack.append(cur.value)
        elif fields_of.get(tp, True):  # (not a leaf by type)
            hit = get(id(cur))
            push(hit[1] if hit is not None else children_tuple(cur))
    return out


def variables(node: cst.CSTNode) -> set:
    """The names ``node`` reads or binds (not attribute names or keywords), nested scopes included."""
    return {n.value for n in variable_nodes(node)}


def names(node: cst.CSTNode) -> set:
    """Every identifier spelled in ``node`` (names, attributes, parameters)."""
    out = set()
    stack = [node]
    pop, push = stack.pop, stack.extend
    get, fields_of, Name = cache_lookup(), _fields, cst.Name
    while stack:
        cur = pop()
        tp = type(cur)
        if tp is Name:
            out.add(cur.value)  # a Name's only children are parentheses
        elif fields_of.get(tp, True):  # (not a leaf by type)
            hit = get(id(cur))
            push(hit[1] if hit is not None else children_tuple(cur))
    return out


_every_field: dict = {}  # node type -> all its child fields (whitespace too), in visiting order
_is_node: dict = {}  # type -> whether it is a CSTNode (isinstance on libcst's ABC is slow)


def comments(node: cst.CSTNode) -> list:
    """Every ``Comment`` in ``node``, in the order a ``CSTVisitor`` meets them (source order).

    Comments live in whitespace, which :func:`walk` does not enter; a visitor would find them at the
    cost of rebuilding every node of ``node``. This walk enters every field instead."""
    out = []
    stack = [node]
    pop, push = stack.pop, stack.extend
    every, is_node = _every_field, _is_node
    Comment = cst.Comment
    while stack:
        cur = pop()
        tp = type(cur)
        if tp is Comment:
            out.append(cur)
            continue
        fields = every.get(tp)
        if fields is None:
            fields = every[tp] = tuple(dict.fromkeys(_VISIT_CALL.findall(inspect.getsource(tp._visit_and_replace_children))))
        kids = []
        for name in fields:
            value = getattr(cur, name)
            vt = type(value)
            if vt is tuple or vt is list:
                for v in value:
                    t = type(v)
                    k = is_node.get(t)
                    if k is None:
                        k = is_node[t] = issubclass(t, cst.CSTNode)
                    if k:
                        kids.append(v)
            else:
                k = is_node.get(vt)
                if k is None:
                    k = is_node[vt] = issubclass(vt, cst.CSTNode)
                if k:
                    kids.append(value)
        kids.reverse()  # last first, so that the first is met next
        push(kids)
    return out
