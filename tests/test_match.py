"""dali_migrate.match against libcst.matchers, which it stands in for: the same patterns, written
once and built with either module, give the same answer on every node of the golden inputs."""

from pathlib import Path

import libcst as cst
import libcst.matchers as lm
import pytest

from dali_migrate import cst_walk
from dali_migrate import match as dm

GOLDEN = Path(__file__).parent / "golden"


def _patterns(m):
    """Patterns of the shapes the codemod writes (positional fields, keywords, nesting, `|`,
    sequences, plain values, matchers that take no field)."""
    return [
        m.Name(),
        m.Name("fn"),
        m.Name("True") | m.Name("False") | m.Name("None"),
        m.Attribute(value=m.Name("self")),
        m.Attribute(attr=m.Name("as_cpu") | m.Name("cpu")),
        m.Call(func=m.Attribute(attr=m.Name("run"))),
        m.Call(func=m.Name("len") | m.Name("iter") | m.Name("next")),
        m.Call(m.Name("range")),
        m.Call(func=m.Attribute(attr=m.Name("build")), args=[]),
        m.SimpleStatementLine([m.Pass()]),
        m.SimpleStatementLine([m.Return()]),
        m.SimpleStatementLine([m.Expr(m.Call(func=m.Attribute(attr=m.Name("__init__"))))]),
        m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())])]),
        m.Expr(m.SimpleString()),
        m.SimpleString() | m.Integer() | m.Float(),
        m.Integer("0"),
        m.UnaryOperation(operator=m.Minus(), expression=m.Integer()),
        m.UnaryOperation(operator=m.Not()),
        m.Arg(keyword=m.Name("device")),
        m.Arg(value=m.SimpleString('"gpu"'), keyword=m.Name("device")),
        m.Name() | m.Tuple() | m.List(),
        m.Tuple(elements=[]),
        m.Raise(m.Name()),
        m.Return(m.Tuple()),
        m.Index(m.Integer()),
    ]


# shapes few golden inputs have, so that every pattern meets a node it matches
EXTRA = """
class P:
    def __init__(self):
        super().__init__()
        pass

def f(x):
    if not x:
        raise ValueError
    return (x, -1)
"""


def _nodes():
    # every third golden file (libcst's own matching is slow: all of them took 20 s)
    out = list(cst_walk.walk(cst.parse_module(EXTRA)))
    for p in sorted(GOLDEN.glob("*.py"))[::3]:
        out.extend(cst_walk.walk(cst.parse_module(p.read_text())))
    return out


NODES = _nodes()


@pytest.mark.parametrize("k", range(len(_patterns(lm))))
def test_same_answers_as_libcst_matchers(k):
    ours, theirs = _patterns(dm)[k], _patterns(lm)[k]
    hits = 0
    for node in NODES:
        want = lm.matches(node, theirs)
        assert dm.matches(node, ours) == want, (k, cst.Module([]).code_for_node(node) if isinstance(node, cst.BaseStatement) else node)
        hits += want
    assert hits, f"pattern {k} matched nothing in the golden inputs: it tests nothing"


def test_none_and_bad_patterns():
    assert not dm.matches(None, dm.Name())
    with pytest.raises(TypeError):
        dm.Name(value="x", nope=1)
    with pytest.raises(AttributeError):
        dm.NotANode
