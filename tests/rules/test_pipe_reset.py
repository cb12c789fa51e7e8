"""pipe-reset: ``pipe.reset()`` goes where DALI's reset() cannot change what the pipeline gives
next (no external source, or generator-function sources without cycle=/parallel=), and is left
to a person, saying why, where it restarts a source.

The programs below run a pipeline for two epochs past the end of its source, with ``reset()``
between them, and record every batch and every StopIteration: the converted program must record
the same (DALI 2.4, CPU)."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from dali_migrate.config import Config
from dali_migrate.engine import convert_source
from dali_migrate.rules import all_rules

HEAD = (
    "import numpy as np\n"
    "import nvidia.dali.fn as fn\n"
    "from nvidia.dali import pipeline_def\n\n\n"
    "def frames():\n"
    "    for i in range(3):\n"
    "        yield [np.full((2,), 10 * i + j, dtype=np.int32) for j in range(2)]\n\n\n"
    "def endless():\n"
    "    while True:\n"
    "        yield [np.arange(2, dtype=np.int32), np.ones(2, dtype=np.int32)]\n\n\n"
    "def batch(info):\n"
    "    if info.iteration >= 2:\n"
    "        raise StopIteration\n"
    "    return [np.full((2,), info.epoch_idx, dtype=np.int32)] * 2\n\n\n"
    "@pipeline_def(batch_size=2, num_threads=1, device_id=None)\n"
    "def pipe_fn({params}):\n"
    "    {body}\n\n\n"
    "def collect({params}):\n"
    "    pipe = pipe_fn({params})\n"
    "    pipe.build()\n"
    "    seen = []\n"
    "    for epoch in range(2):\n"
    "        for step in range(5):\n"
    "            try:\n"
    "                (out,) = pipe.run()\n"
    "                seen.append([np.array(out[i]).tolist() for i in range(len(out))])\n"
    "            except StopIteration:\n"
    '                seen.append("StopIteration")\n'
    "        {reset}\n"
    "    return seen\n"
)


def _source(body: str, params: str = "", reset: str = "pipe.reset()") -> str:
    return HEAD.format(body=body, params=params, reset=reset)


GENERATOR = "return fn.external_source(source=frames)"
READER = 'jpegs, labels = fn.readers.file(file_root=root, name="Reader")\n    return (labels,)'
CONVERTED = {
    # spent after three batches: DALI's reset() leaves the generator it made spent
    "generator function that ends": (GENERATOR, ""),
    "endless generator function": ("return fn.external_source(source=endless)", ""),
    # a reader never ends a run(): reset() has nothing to reset
    "reader": (READER, "root"),
}


@pytest.mark.parametrize("key", sorted(CONVERTED))
def test_removed(key):
    body, params = CONVERTED[key]
    result = convert_source(_source(body, params))
    assert not result.markers, result.output
    assert ".reset()" not in result.output and "@pipeline_def" not in result.output


MARKED = {
    "callable": ("return fn.external_source(source=batch, batch_info=True)", "its source `batch` is a callable, which reset() calls again"),
    "iterable": ("return fn.external_source(source=[[np.zeros(2)]])", "is an iterable, whose iterator may go on"),
    "cycled": ('return fn.external_source(source=frames, cycle="raise")', "its source is cycled or parallel"),
}


@pytest.mark.parametrize("key", sorted(MARKED))
def test_left_with_a_marker(key):
    body, words = MARKED[key]
    result = convert_source(_source(body))
    assert "@pipeline_def" in result.output and "pipe.reset()" in result.output
    assert any(words in m.reason and m.reason.startswith("pipe.reset() of pipe_fn: ") for m in result.markers), [
        m.reason for m in result.markers
    ]


def test_value_used_or_arguments_are_marked():
    result = convert_source(_source(GENERATOR, reset="done = pipe.reset()"))
    assert any("but here its value is used" in m.reason for m in result.markers), result.output
    result = convert_source(_source(GENERATOR, reset="pipe.reset(True)"))
    assert any("pipe.reset() with arguments" in m.reason for m in result.markers), result.output


def test_rule_disabled_is_marked():
    enabled = frozenset(r.id for r in all_rules()) - {"pipe-reset"}
    result = convert_source(_source(GENERATOR), config=Config(enabled_rules=enabled))
    assert any("pipe.reset() has no automatic dynamic-mode conversion" in m.reason for m in result.markers), result.output


def _load(tmp_path, name, source):
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"_pipe_reset_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(spec.name, None)
    return module


def _runs(tmp_path, source, *args):
    pytest.importorskip("nvidia.dali.experimental.dynamic")
    original = _load(tmp_path, "original", source)
    converted = _load(tmp_path, "converted", convert_source(source).output)
    return original.collect(*args), converted.collect(*args)


@pytest.mark.parametrize("key", sorted(CONVERTED))
def test_same_runs_as_the_pipeline(key, tmp_path, fixture_data):
    body, params = CONVERTED[key]
    args = (str(fixture_data / "images"),) if params else ()
    want, got = _runs(tmp_path, _source(body, params), *args)
    assert got == want
    if key == "generator function that ends":
        # three batches, then StopIteration through the second epoch, reset() or not
        assert want[3:] == ["StopIteration"] * 7


def test_reset_restarts_a_callable_in_dali(tmp_path):
    """What the callable's marker says: after reset() DALI calls it again (next epoch index)."""
    pytest.importorskip("nvidia.dali")
    original = _load(tmp_path, "original", _source(MARKED["callable"][0]))
    seen = original.collect()
    assert seen[2:5] == ["StopIteration"] * 3 and seen[5] == [[1, 1], [1, 1]]
