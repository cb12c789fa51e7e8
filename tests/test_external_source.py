"""fn.external_source conversions give the same batches, and end (StopIteration) at the same run.

Runs every pipeline of ``tests/golden/external_source_callables.py`` in pipeline mode and its
converted generator (native ndd, CPU) past the end of finite sources; compares every sample
(dtype, shape, values) and layout.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("nvidia.dali.experimental.dynamic")

GOLDEN = Path(__file__).resolve().parent / "golden"


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _next(it):
    try:
        return it()
    except StopIteration:
        return "stop"


@pytest.mark.parametrize("name,iterations", [("sample_pipe", 4), ("batch_info_pipe", 3), ("iterable_pipe", 6), ("generator_pipe", 7)])
def test_external_source_same_batches(name, iterations):
    original = _load(GOLDEN / "external_source_callables.py", "_es_original")
    converted = _load(GOLDEN / "external_source_callables.expected.py", "_es_converted")
    pipe = getattr(original, name)()
    pipe.build()
    gen = getattr(converted, name)()
    stops = 0
    for i in range(iterations):
        want, got = _next(pipe.run), _next(lambda: next(gen))
        if isinstance(want, str) or isinstance(got, str):
            assert want == got, (i, want, got)
            stops += 1
            continue
        for x, y in zip(want, got):
            assert (x.layout() or "") == (y.layout or "")
            for k in range(len(x)):
                a, b = np.asarray(x.at(k)), np.asarray(y.select(k))
                assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b), (i, k)
    if name in ("iterable_pipe", "generator_pipe"):
        assert stops == 2
