"""Parent links for a libcst tree (a visitor pass, much cheaper than libcst's ParentNodeProvider)."""

from __future__ import annotations

from typing import Optional

import libcst as cst


class Parents(cst.CSTVisitor):
    def __init__(self) -> None:
        self._stack: list = []
        self.parent: dict = {}

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self._stack:
            self.parent[id(node)] = self._stack[-1]
        self._stack.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self._stack.pop()

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


_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)


def build(module: cst.Module) -> Parents:
    p = Parents()
    module.visit(p)
    return p
