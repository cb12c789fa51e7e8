"""Equivalence checking on the GPU: `verify(..., device="gpu")` runs the original pipeline with
its GPU/mixed operators and the converted loop on the runtime on the GPU, in pipeline-compatible
random mode. Skipped without a CUDA device (the runtime's own count)."""

from pathlib import Path

import pytest

pytest.importorskip("nvidia.dali")

from dali_migrate.runtime import _backend  # noqa: E402
from dali_migrate.verify import Options, verify  # noqa: E402

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(_backend.cuda_device_count() == 0, reason="no CUDA device")]

CASE = Path(__file__).parent / "verify_cases" / "augment.py"


@pytest.fixture(scope="module")
def images(fixture_data):
    return str(fixture_data / "images")


def test_random_pipeline_is_equivalent_on_gpu(images):
    verdict = verify(Options(original=CASE, name="augment", params={"root": images},
                             device="gpu"))
    assert verdict.equal, verdict.describe()
    assert verdict.iterations == 8 and verdict.outputs == 2


def test_other_seed_and_batch_size_on_gpu(images):
    verdict = verify(Options(original=CASE, name="augment", params={"root": images},
                             device="gpu", seed=99, batch_size=5, iterations=6))
    assert verdict.equal, verdict.describe()
