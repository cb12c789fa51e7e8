"""An operator's own ``seed=`` that may be None when the pipeline is built.

In a pipeline, ``seed=None`` on an operator is no seed at all: the operator takes one derived
from the pipeline's seed, like an operator without ``seed=`` (checked with DALI 2.4: the same
draws and shuffle order as leaving it out, following the pipeline's seed). ndd reads None
otherwise: ``ndd.random.RNG(seed=None)`` takes its seed from Python's global ``random`` and a
reader given ``seed=None`` shuffles in one fixed order. So a ``seed=`` that is None, or may be
(``seed=args.seed`` with a default of None), falls back where it is None to what the operator
gets without one: the pipeline's RNG, the pipeline's seed. A negative seed is no such case: an
operator given ``seed=-1`` draws one fixed stream whatever the pipeline's seed, and so do ndd's
RNG and readers given -1.
"""

from __future__ import annotations

import libcst as cst


def is_none(expr: cst.BaseExpression) -> bool:
    """``seed=None``, written out."""
    return isinstance(expr, cst.Name) and expr.value == "None"


#: builtins that give a number or raise (a file that rebinds one of these names is not told apart)
_NUMBERS = frozenset({"int", "hash", "abs", "len", "round"})


def never_none(expr: cst.BaseExpression) -> bool:
    """An expression that cannot be None: a number, arithmetic (which raises rather than give
    None), or ``int(...)`` and the like."""
    if isinstance(expr, (cst.Integer, cst.Float, cst.BinaryOperation)):
        return True
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in _NUMBERS:
        return True
    return isinstance(expr, cst.UnaryOperation) and never_none(expr.expression)


def reevaluable(expr: cst.BaseExpression) -> bool:
    """Read twice (``x if x is not None else ...``), it gives the same value both times: a name, an
    attribute of one (``args.seed``, ``self.seed``), or either subscripted with a literal."""
    if isinstance(expr, cst.Name):
        return True
    if isinstance(expr, cst.Attribute):
        return reevaluable(expr.value)
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1:
        index = expr.slice[0].slice
        return (
            reevaluable(expr.value) and isinstance(index, cst.Index)
            and isinstance(index.value, (cst.Integer, cst.SimpleString))
        )
    return False


def why_not(expr: cst.BaseExpression, what: str):
    """Why a maybe-None ``seed=`` of ``what`` cannot fall back exactly, or None."""
    if is_none(expr) or never_none(expr) or reevaluable(expr):
        return None
    return (
        f"{what}: its seed= may be None (then the pipeline gives it a seed drawn from the pipeline's seed) "
        "and is not a name dali-migrate can test for None and read again: assign it to a name first"
    )


def or_else(expr: cst.BaseExpression, fallback: cst.BaseExpression, body=None) -> cst.BaseExpression:
    """``body if expr is not None else fallback`` (``body`` defaults to ``expr``; ``body`` alone
    where ``expr`` cannot be None, ``fallback`` where it is None as written)."""
    body = expr if body is None else body
    if never_none(expr):
        return body
    if is_none(expr):
        return fallback
    test = cst.Comparison(left=expr, comparisons=[cst.ComparisonTarget(operator=cst.IsNot(), comparator=cst.Name("None"))])
    return cst.IfExp(test=test, body=body, orelse=fallback)
