"""Code the rules write, parsed once per text.

The rules spell much of the converted code as text and parse it (``ctx = ndd.EvalContext(...)``
in every pipeline, an external source's draw, a constant's value...). The same texts come again
for every pipeline and every file, and a parse costs more than the rest of a rule's work, so each
text is parsed once and its node given to every caller.

Sharing a node is safe only because libcst nodes never change (every edit makes a new node) and
because what these nodes go into is converted code, which is printed and never looked at again by
node identity (``id(node)`` maps are built over the file as written). Code that is analysed after
it is made (a pipeline's statements before the operator rules run) must not take its nodes from
here.
"""

from __future__ import annotations

import libcst as cst

_KEEP = 1024  # texts per kind; past that the cache starts again (a file's texts come together)
_statements: dict = {}
_expressions: dict = {}
_bodies: dict = {}


def statement(text: str) -> cst.BaseStatement:
    node = _statements.get(text)
    if node is None:
        node = cst.parse_statement(text)  # raises as it did, and nothing is kept
        if len(_statements) >= _KEEP:
            _statements.clear()
        _statements[text] = node
    return node


def expression(text: str) -> cst.BaseExpression:
    node = _expressions.get(text)
    if node is None:
        node = cst.parse_expression(text)
        if len(_expressions) >= _KEEP:
            _expressions.clear()
        _expressions[text] = node
    return node


def module_body(text: str) -> tuple:
    """The statements of ``text`` parsed as a module."""
    body = _bodies.get(text)
    if body is None:
        body = tuple(cst.parse_module(text).body)
        if len(_bodies) >= _KEEP:
            _bodies.clear()
        _bodies[text] = body
    return body
