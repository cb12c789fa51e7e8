"""One walk over a libcst tree that records, for every node, its parent, its place in pre-order
and its subtree's extent, plus the nodes of each type.

libcst's matchers (``m.findall``) and metadata providers walk the whole tree on every query; the
codemod asks many questions of every file, so it asks this index instead (issue 6 measured
``m.findall`` at about 70% of a conversion).
"""

from __future__ import annotations

import bisect
from typing import Optional

import libcst as cst

from dali_migrate import cst_walk
from dali_migrate.cst_walk import children_tuple as children


class Parents:
    def __init__(self) -> None:
        self.parent: dict = {}
        self.order: list = []  # every node, in pre-order
        self.span: dict = {}  # id(node) -> (first, end): order[first:end] is its subtree
        self._by_type: dict = {}  # type -> [positions in order]
        self._names: Optional[dict] = None

    # -- queries ---------------------------------------------------------------------------
    def of(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        return self.parent.get(id(node))

    def statement(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The statement line or compound statement that holds ``node``."""
        cur = node
        while cur is not None and not isinstance(cur, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            cur = self.of(cur)
        return cur

    def scope(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The nearest enclosing function, lambda or class (None: module level); comprehensions read their
        enclosing scope's names, so they do not count."""
        cur = self.of(node)
        while cur is not None and not isinstance(cur, _SCOPES):
            cur = self.of(cur)
        return cur

    def find(self, types, within: Optional[cst.CSTNode] = None) -> list:
        """Nodes of the given type(s) in pre-order, in the whole tree or in ``within``'s subtree
        (``within`` itself included)."""
        if not isinstance(types, tuple):
            types = (types,)
        lo, hi = self.span[id(within)] if within is not None else (0, len(self.order))
        found = []
        for t in types:
            positions = self._by_type.get(t, ())
            # positions are in pre-order, and a subtree is one run of it
            found.extend(positions[bisect.bisect_left(positions, lo):bisect.bisect_left(positions, hi)])
        if len(types) > 1:
            found.sort()
        return [self.order[p] for p in found]

    def names(self, value: str) -> list:
        """Every ``Name`` node spelled ``value``, in pre-order."""
        if self._names is None:
            self._names = {}
            for pos in self._by_type.get(cst.Name, ()):
                node = self.order[pos]
                self._names.setdefault(node.value, []).append(node)
        return self._names.get(value, [])

    def all_names(self) -> set:
        self.names("")
        return set(self._names)

    def contains(self, outer: cst.CSTNode, node: cst.CSTNode) -> bool:
        lo, hi = self.span[id(outer)]
        return lo <= self.span[id(node)][0] < hi


_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)


_END = object()


def build(module: cst.Module) -> Parents:
    """Index ``module`` in one walk (cst_walk's: whitespace and punctuation are not indexed).

    The same node gives the same index (callers only read it): libcst trees do not change, and
    rules ask again for the pipeline they look at, once per operator call in it."""
    hit = _built.get(id(module))
    if hit is not None and hit[0] is module:
        return hit[1]
    p = _build(module)
    if len(_built) >= _KEEP:
        del _built[next(iter(_built))]  # the oldest: a file's questions come in runs
    # the node is kept with its index: its id cannot be reused while the entry lives
    _built[id(module)] = (module, p)
    return p


_built: dict = {}  # id(node) -> (node, its index)
_KEEP = 8


def _build(module: cst.Module) -> Parents:
    p = Parents()
    order, parent, span, by_type = p.order, p.parent, p.span, p._by_type
    stack: list = [(module, None)]
    pop, push = stack.pop, stack.append
    get, fields_of = cst_walk.cache_lookup(), cst_walk._fields
    while stack:
        node, up = pop()
        if up is _END:
            span[id(node)] = (span[id(node)][0], len(order))
            continue
        pos = len(order)
        order.append(node)
        if up is not None:
            parent[id(node)] = up
        tp = type(node)
        positions = by_type.get(tp)
        if positions is None:
            positions = by_type[tp] = []
        positions.append(pos)
        if not fields_of.get(tp, True):  # a leaf by type: no children to look up
            kids = ()
        else:
            hit = get(id(node))
            kids = hit[1] if hit is not None else children(node)
        if not kids:  # a leaf (most nodes): its extent is known now
            span[id(node)] = (pos, pos + 1)
            continue
        span[id(node)] = (pos, pos)
        push((node, _END))
        for kid in reversed(kids):
            push((kid, node))
    return p
