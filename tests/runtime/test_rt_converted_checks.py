"""Converted code run on the runtime (``--ndd-module dali_migrate.runtime``) keeps the pipeline's
checks and seeding on every DALI the runtime supports (CI runs this file with 2.4 and 1.53):
``external_source(dtype=)`` raises on data of another type (``external_source_batch``), gives the
same batch on data of that type, and a pipeline without a seed leaves Python's ``random`` alone
(``seed_or_random``)."""

import importlib.util
import random
import textwrap

import pytest

pytest.importorskip("nvidia.dali")

from dali_migrate.config import Config  # noqa: E402
from dali_migrate.engine import convert_source  # noqa: E402

SOURCE = textwrap.dedent('''
    import numpy as np
    import nvidia.dali.fn as fn
    import nvidia.dali.types as types
    from nvidia.dali import pipeline_def


    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def typed(dtype):
        data = fn.external_source(source=lambda: np.arange(6, dtype=np.float32).reshape(2, 3), dtype=dtype)
        return data, fn.random.uniform(range=[0.0, 1.0])


    def first(dtype_name):
        pipe = typed(getattr(types, dtype_name))
        pipe.build()
        try:
            data, _ = pipe.run()
        except RuntimeError as e:
            return "raised", "expected data of type" in str(e)
        return np.asarray(data.as_tensor()).tolist()
''')


def _load(tmp_path, name, text):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"_rt_checks_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    out = convert_source(SOURCE, config=Config(ndd_module="dali_migrate.runtime")).output
    assert "external_source_batch(" in out and "seed_or_random" in out and "@pipeline_def" not in out
    tmp = tmp_path_factory.mktemp("converted_checks")
    return _load(tmp, "original", SOURCE), _load(tmp, "converted", out)


@pytest.mark.parametrize("dtype", ["FLOAT", "FLOAT16"])
def test_external_source_dtype_is_checked_as_in_the_pipeline(both, dtype):
    original, converted = both
    want = original.first(dtype)
    assert want == (("raised", True) if dtype == "FLOAT16" else [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    assert converted.first(dtype) == want


def test_unseeded_pipeline_leaves_pythons_random_alone(both):
    _, converted = both
    random.seed(0)
    untouched = random.random()
    random.seed(0)
    converted.first("FLOAT")
    assert random.random() == untouched
