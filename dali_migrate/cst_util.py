"""Small libcst helpers shared by the analysis and the rules."""

from __future__ import annotations

import re
from typing import Iterable, Optional

import libcst as cst

from dali_migrate import cst_walk


def dotted(node: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def chain_root(node: cst.BaseExpression) -> cst.BaseExpression:
    """The node a chain of calls, attributes and subscripts starts from (``x`` of ``x.a()[0].b``)."""
    while isinstance(node, (cst.Call, cst.Attribute, cst.Subscript)):
        node = node.func if isinstance(node, cst.Call) else node.value
    return node


def attr_chain(path: str) -> cst.BaseExpression:
    """The expression for a dotted path (inverse of :func:`dotted`)."""
    head, *rest = path.split(".")
    node: cst.BaseExpression = cst.Name(head)
    for part in rest:
        node = cst.Attribute(value=node, attr=cst.Name(part))
    return node


def kwarg(call: cst.Call, name: str) -> Optional[cst.Arg]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def positional(call: cst.Call) -> list:
    return [a for a in call.args if a.keyword is None and not a.star]


def has_star_args(call: cst.Call) -> bool:
    return any(a.star for a in call.args)


def without_kwargs(call: cst.Call, names: Iterable[str]) -> cst.Call:
    names = set(names)
    args = [a for a in call.args if not (a.keyword is not None and a.keyword.value in names)]
    return call.with_changes(args=_fix_trailing_comma(args, call.args))


def with_kwarg(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    """Add ``name=value`` at the end, or replace the value of an existing ``name=``."""
    existing = kwarg(call, name)
    if existing is not None:
        return call.with_changes(
            args=[a.with_changes(value=value) if a is existing else a for a in call.args]
        )
    args = list(call.args)
    new = cst.Arg(keyword=cst.Name(name), value=value, equal=_EQUAL)
    if args:
        last = args[-1]
        # Keep the author's layout: a call written one argument per line gets the new one on a
        # line of its own too, with the same indentation and trailing comma.
        comma = last.comma
        if isinstance(comma, cst.Comma) and _is_multiline(comma):
            # The last comma leads to the closing parenthesis; the one before it to the next argument.
            between = args[-2].comma if len(args) >= 2 and isinstance(args[-2].comma, cst.Comma) else comma
            args[-1] = last.with_changes(comma=between)
            new = new.with_changes(comma=comma)
        else:
            args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            if isinstance(comma, cst.Comma):
                new = new.with_changes(comma=comma)
    args.append(new)
    return call.with_changes(args=args)


_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def _is_multiline(comma: cst.Comma) -> bool:
    return isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace)


def _fix_trailing_comma(new_args: list, old_args: Iterable[cst.Arg]) -> list:
    """After removing arguments, the new last one takes the old last one's trailing comma."""
    old_args = list(old_args)
    if not new_args or not old_args or new_args[-1] is old_args[-1]:
        return new_args
    new_args = list(new_args)
    new_args[-1] = new_args[-1].with_changes(comma=old_args[-1].comma)
    return new_args


def names_in(node: cst.CSTNode) -> set:
    """Every identifier spelled in ``node`` (names, attributes, parameters)."""
    return cst_walk.names(node)


def names_bound(target: cst.BaseExpression) -> set:
    """The names an assignment, loop, ``with ... as`` or ``del`` target binds: ``a, (b, *c)`` binds
    a, b and c (a starred element's ``value`` is its name); ``self.x, self.y`` binds none (it sets
    attributes of ``self``, which stays the same object; a subscript binds nothing either)."""
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(names_bound(e.value) for e in target.elements))
    return set()


def map_branches(node: cst.If, change) -> cst.If:
    """``node``, an ``if``/``elif``/``else`` chain, with each branch (its ``If`` or ``Else`` node)
    made ``change(branch)``."""
    orelse = node.orelse
    if isinstance(orelse, cst.If):
        orelse = map_branches(orelse, change)
    elif orelse is not None:
        orelse = change(orelse)
    return change(node).with_changes(orelse=orelse)


def assignment(target, value: cst.BaseExpression, **line) -> cst.SimpleStatementLine:
    """The statement ``target = value`` (``target`` a name, or an expression to assign to);
    ``line``: the statement line's own fields (leading_lines=...)."""
    target = cst.Name(target) if isinstance(target, str) else target
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(target)], value)], **line)


def fresh_name(base: str, taken: set) -> str:
    """``base``, or ``base_2``, ``base_3``... whichever is not taken; records it as taken."""
    name, i = base, 2
    while name in taken:
        name = f"{base}_{i}"
        i += 1
    taken.add(name)
    return name


def code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def one_line(node: cst.CSTNode) -> str:
    """``node``'s source on one line, cut short: for quoting it in a marker (a marker is one line)."""
    text = " ".join(line.strip() for line in code(node).strip().splitlines())
    return text if len(text) <= 60 else text[:57] + "..."


def first_line(stmt: cst.CSTNode) -> str:
    """The first line of a statement's source, without the comment lines above it: how a marker
    names a compound statement (``if dali_cpu:``)."""
    stmt = stmt.with_changes(leading_lines=[])
    body = getattr(stmt, "body", None)
    if isinstance(body, cst.IndentedBlock) and body.body:
        # The line ends in the header (the block's own header holds its newline), so the block's
        # statements, and the branches after it, need not be printed: a marker naming an `if` of
        # a long __init__ printed all of it (issue 6).
        stmt = stmt.with_changes(body=body.with_changes(body=[_PASS_LINE]))
        if isinstance(stmt, (cst.If, cst.For, cst.While)):
            stmt = stmt.with_changes(orelse=None)
    return code(stmt).strip().splitlines()[0]


_PASS_LINE = cst.SimpleStatementLine([cst.Pass()])


def one_line_statement(stmt: cst.CSTNode) -> str:
    """:func:`one_line` of a statement without the comment lines above it (markers among them)."""
    if isinstance(stmt, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        stmt = stmt.with_changes(leading_lines=[])
    return one_line(stmt)


_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def comment_tail(source: str) -> int:
    """Where the file's closing run of comment and blank lines starts (len(source) if none).

    libcst 1.9's parser keeps only the last of several indented comment lines that end a file
    (``x = 1 / "  # a" / "  # b"`` comes back without ``# a``), so they are kept as text."""
    lines = _LINES.findall(source)  # Python's line ends only (str.splitlines also splits at \f, \x1c...)
    start = len(source)
    for line in reversed(lines):
        if line.strip() and not line.lstrip().startswith("#"):
            break
        start -= len(line)
    return start
