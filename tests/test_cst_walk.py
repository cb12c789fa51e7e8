"""The fast walk meets the same nodes, in the same order, as libcst's own visitor."""

from pathlib import Path

import libcst as cst
import pytest

from dali_migrate import cst_walk

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted([*ROOT.glob("tests/golden/*.py"), *ROOT.glob("dali_migrate/**/*.py"), *ROOT.glob("runtime/*.py")])
# A file with the constructs the golden cases lack: every statement and expression kind libcst has.
EXTRA = '''
import a.b as c, d
from .x import (y as z, w)
from m import *
@dec(1)
@other
async def f(a, /, b: int = 1, *args, c, d=2, **kw) -> "T":
    global g
    nonlocal_ = lambda q, *r, s=1, **t: q
    async with x as (y, z), w:
        async for i in aiter():
            await i
    try:
        pass
    except* ValueError as e:
        raise E from e
    else:
        ...
    finally:
        del a[1:2:3], b.c
    while not (x is not y) or x in y and -x < +y <= ~x:
        break
    else:
        continue
    match p:
        case [1, *rest] | {"k": v, **kw} if v: pass
        case Point(x=0, y=_) as pt: pass
        case None: pass
    x = [i for i in y if i async for j in z]
    x: int = {k: v for k, v in d.items()}
    x += (yield from g) if x else (yield)
    x = {*a, *b}, {**d}, f"{x!r:>{w}}", b"b" b"c", 1j, 0x1F, ...
    assert x, "m"
    return x[::2] @ y
class K(B, metaclass=M):
    type_alias: "int"
    def m(self): return (a := 1)
if x: pass
elif y: pass
else: pass
with a: pass
print(*a, **b)
'''


def _visitor_order(module):
    seen = []

    class V(cst.CSTVisitor):
        def on_visit(self, node):
            if isinstance(node, cst_walk._SKIPPED_TYPES):
                return False  # nor what lies inside (a comment in trailing whitespace)
            seen.append(node)
            return True

    module.visit(V())
    return seen


@pytest.mark.parametrize("text", [EXTRA, *[p.read_text() for p in SOURCES]],
                         ids=["extra", *[str(p.relative_to(ROOT)) for p in SOURCES]])
def test_walk_matches_libcst_visitor(text):
    module = cst.parse_module(text)
    expected = _visitor_order(module)
    got = list(cst_walk.walk(module))
    assert [id(n) for n in got] == [id(n) for n in expected]


def test_names_are_every_identifier():
    module = cst.parse_module("import os\nx = os.path.join(y, z=1)\ndef f(a): return a\n")
    assert cst_walk.names(module) == {"os", "x", "path", "join", "y", "z", "f", "a"}


_COMMENTED = '''
# above
x = f(a,  # after a
      # own line among the arguments
      b)  # after the call
if x:  # after the colon
    # inside the block
    pass
    # after the block's last statement
else:
    y = [1,  # in a list
         2]
'''


@pytest.mark.parametrize("text", [_COMMENTED, EXTRA, *[p.read_text() for p in SOURCES]],
                         ids=["commented", "extra", *[str(p.relative_to(ROOT)) for p in SOURCES]])
def test_comments_match_libcst_visitor(text):
    module = cst.parse_module(text)

    class V(cst.CSTVisitor):
        def __init__(self):
            self.found = []

        def visit_Comment(self, node):
            self.found.append(node)

    for node in [module, *module.body]:
        v = V()
        node.visit(v)
        assert [id(c) for c in cst_walk.comments(node)] == [id(c) for c in v.found]
