"""Issue 8, part 3: idempotence and stability as properties.

- Converting twice changes nothing (generated pipelines plus call sites; every golden input).
- A file with no DALI code never changes: arbitrary Python from hypothesmith (when installed),
  and DALI-free files from a grammar of our own full of DALI-like names (`fn.resize`, `pipe.run()`,
  `@pipeline_def` from another library, a local `nvidia` package...), also through the runner,
  byte for byte, in several encodings and newline styles.
"""

from __future__ import annotations

import codecs
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _pipegen import pipelines
from dali_migrate import runner
from dali_migrate.engine import convert_source
from dali_migrate.model import ConversionError

EXAMPLES = int(os.environ.get("DALI_MIGRATE_PROPERTY_EXAMPLES", "200"))
FAST = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
GOLDEN = Path(__file__).resolve().parent.parent / "golden"

CALL_SITES = [
    "pipe = gen_pipe('/data')\npipe.build()\nout = pipe.run()\n",
    "pipe = gen_pipe('/data', batch_size=4, prefetch_queue_depth=2)\npipe.build()\nfor _ in range(3):\n    outs = pipe.run()\n",
    "pipe = gen_pipe(root='/data')\npipe.build()\nimages = pipe.run()[0]\nfirst = images.at(0)\nn = len(images)\n",
    "def train(root):\n    pipe = gen_pipe(root)\n    pipe.build()\n    return pipe.run()\n",
    "if __name__ == '__main__':\n    p = gen_pipe('/data', device_id=None)\n    p.build()\n    print(p.run())\n",
    "",
]


def _convert_twice(text: str) -> None:
    once = convert_source(text).output
    twice = convert_source(once).output
    assert twice == once, f"second conversion changed the code:\n--- once\n{once}\n--- twice\n{twice}"


# A quarter: each conversion costs ~0.1 s, and test_generated_pipelines converts its 200 twice too.
@settings(FAST, max_examples=max(EXAMPLES // 4, 10))
@given(g=pipelines(max_steps=8), tail=st.sampled_from(CALL_SITES))
def test_converting_twice_changes_nothing(g, tail):
    _convert_twice(g.source + "\n\n" + tail)


@pytest.mark.parametrize(
    "name", sorted(p.name for p in GOLDEN.glob("*.py") if not p.name.endswith(".expected.py")))
def test_golden_inputs_converted_twice(name):
    _convert_twice((GOLDEN / name).read_text(encoding="utf-8"))


# -- DALI-free code is never changed ----------------------------------------------------------------


def _unchanged(text: str) -> None:
    try:
        out = convert_source(text).output
    except ConversionError:
        return  # does not parse for libcst: reported as an error, file not written
    assert out == text


hypothesmith = None
try:
    import hypothesmith  # noqa: F811
except ImportError:  # optional: our own grammar below still runs
    pass


@pytest.mark.skipif(hypothesmith is None, reason="hypothesmith not installed")
@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # hypothesmith's programs: `1()` and such
@settings(max_examples=min(EXAMPLES, 100), deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(text=st.one_of(
    st.deferred(lambda: hypothesmith.from_grammar()),
    st.deferred(lambda: hypothesmith.from_node()),
))
def test_arbitrary_python_is_never_changed(text):
    _unchanged(text)


_names = st.sampled_from(["fn", "ops", "pipe", "types", "dali", "nvidia", "pipeline_def", "Pipeline",
                          "ndd", "x", "images", "labels", "reader", "tl"])
_attrs = st.sampled_from(["resize", "readers.file", "decoders.image", "random.coin_flip", "build", "run",
                          "at", "as_cpu", "as_tensor", "gpu", "epoch_size", "crop_mirror_normalize"])
_imports = st.sampled_from([
    "import my_lib as fn", "from mylib import fn, pipeline_def", "import torchvision.ops as ops",
    "import nvidia", "from nvidia import cuda", "import types", "from . import fn",
    "from .nvidia import dali", "import fn", "",
])


@st.composite
def _dali_free_statement(draw) -> str:
    obj, attr = draw(_names), draw(_attrs)
    arg = draw(st.sampled_from(["", "x", "device='mixed'", "file_root='/d', random_shuffle=True", "0"]))
    kind = draw(st.integers(0, 6))
    if kind == 0:
        return f"{draw(_names)} = {obj}.{attr}({arg})"
    if kind == 1:
        return f"@{obj}.{attr}(batch_size=8)\ndef {draw(_names)}_fn(a, b=1):\n    return a.{attr}({arg})"
    if kind == 2:
        return f"@pipeline_def\ndef p():\n    return {obj}.{attr}({arg})"
    if kind == 3:
        return f"with {obj}:\n    {draw(_names)} = {obj}.{attr}()"
    if kind == 4:
        return f"class {draw(_names).capitalize()}Pipe({obj}):\n    def define_graph(self):\n        return {obj}.{attr}()"
    if kind == 5:
        return f"for {obj} in range(3):\n    print({obj}.{attr})"
    return f"# {obj}.{attr}({arg})  nvidia.dali"


@st.composite
def dali_free_files(draw) -> str:
    imports = draw(st.lists(_imports, max_size=3))
    body = draw(st.lists(_dali_free_statement(), min_size=1, max_size=8))
    return "\n".join([i for i in imports if i] + body) + "\n"


@FAST
@given(text=dali_free_files())
def test_dali_free_files_are_never_changed(text):
    _unchanged(text)


@settings(max_examples=min(EXAMPLES, 60), deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(text=dali_free_files(),
       encoding=st.sampled_from(["utf-8", "utf-8-sig", "latin-1", "utf-16"]),
       newline=st.sampled_from(["\n", "\r\n", "\r"]))
def test_dali_free_files_byte_identical_through_the_runner(tmp_path_factory, text, encoding, newline):
    d = tmp_path_factory.mktemp("free")
    p = d / "m.py"
    body = text.replace("\n", newline)
    raw = body.encode(encoding) if encoding != "latin-1" else (
        f"# -*- coding: latin-1 -*-{newline}# é{newline}" + body).encode("latin-1")
    p.write_bytes(raw)
    res = runner.process_file(p, runner.Options())
    assert p.read_bytes() == raw
    assert not res.written
    if encoding == "utf-16":
        assert res.status.value == "error"  # no coding cookie, no BOM Python knows: not UTF-8
    else:
        assert res.status.value in ("unchanged", "needs-review"), res


def test_utf8_bom_and_cookie_files_round_trip_when_converted(tmp_path):
    text = "import nvidia.dali.fn as fn\nx = fn.decoders.image(y)\n"
    for raw in (codecs.BOM_UTF8 + text.encode(), b"# coding: latin-1\n# \xe9\n" + text.encode()):
        p = tmp_path / "m.py"
        p.write_bytes(raw)
        runner.process_file(p, runner.Options())
        out = p.read_bytes()
        assert out[:4] == raw[:4]
        assert runner.process_file(p, runner.Options()).written is False  # stable
