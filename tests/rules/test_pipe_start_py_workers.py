"""pipe-start-py-workers: ``pipe.start_py_workers()`` goes, as ``build()`` does; its value used
or the rule disabled leaves the pipeline to a person."""

from __future__ import annotations

from dali_migrate.config import Config
from dali_migrate.engine import convert_source
from dali_migrate.rules import all_rules

SRC = (
    "import numpy as np\n"
    "from nvidia.dali import fn, pipeline_def\n\n\n"
    "def sample(info):\n"
    "    return np.full((2,), info.idx_in_epoch, dtype=np.int32)\n\n\n"
    "@pipeline_def(batch_size=4, py_num_workers=2)\n"
    "def pipe_fn():\n"
    "    return fn.external_source(sample, batch=False, parallel=True)\n\n\n"
    "pipe = pipe_fn()\n"
    "{use}\n"
    "pipe.build()\n"
    "out = pipe.run()\n"
)


def test_removed():
    result = convert_source(SRC.format(use="pipe.start_py_workers()"))
    assert not result.markers, result.output
    assert "start_py_workers" not in result.output and "build()" not in result.output
    assert "out = next(pipe)\n" in result.output


def test_value_used_is_marked():
    result = convert_source(SRC.format(use="started = pipe.start_py_workers()"))
    assert any("pipe.start_py_workers() is removed, but here its value is used" in m.reason for m in result.markers), result.output
    assert "@pipeline_def" in result.output


def test_rule_disabled_is_marked():
    enabled = frozenset(r.id for r in all_rules()) - {"pipe-start-py-workers"}
    result = convert_source(SRC.format(use="pipe.start_py_workers()"), config=Config(enabled_rules=enabled))
    assert any("pipe.start_py_workers() has no automatic dynamic-mode conversion" in m.reason for m in result.markers), result.output
