"""GPU paths (skipped where no CUDA device is present)."""

import numpy as np
import pytest

pytest.importorskip("nvidia.dali")

from conftest import has_cuda  # noqa: E402

import dali_migrate.runtime as ndd  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not has_cuda(), reason="no CUDA device")]

IMG = np.arange(8 * 6 * 3, dtype=np.uint8).reshape(8, 6, 3)


def test_roundtrip_and_gpu_op():
    t = ndd.tensor(IMG, layout="HWC").gpu()
    assert t.device.device_type == "gpu"
    assert "data" in t.__cuda_array_interface__
    y = ndd.flip(t, horizontal=1)
    np.testing.assert_array_equal(np.asarray(y.cpu()), IMG[:, ::-1])
    b = ndd.batch([IMG, IMG], layout="HWC").gpu()
    np.testing.assert_array_equal(np.asarray(ndd.flip(b, horizontal=0, vertical=1).cpu()
                                             .select(1)), IMG[::-1])
