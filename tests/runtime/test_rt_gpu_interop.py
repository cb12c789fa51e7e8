"""GPU data movement and interop: .gpu()/.cpu() round trips, .torch() on cuda (device, dtype,
values, zero copy, pad=True), __cuda_array_interface__ (CuPy), __dlpack__ (torch, CuPy) with
stream semantics, device placement on a second GPU.

Skipped without a CUDA device (the runtime's own count); torch / CuPy parts skip when those are
not installed (or torch has no CUDA).
"""

import numpy as np
import pytest

pytest.importorskip("nvidia.dali")

import dali_migrate.runtime as ndd  # noqa: E402
from dali_migrate.runtime import _backend  # noqa: E402

NGPU = _backend.cuda_device_count()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(NGPU == 0, reason="no CUDA device")]

IMG = np.arange(8 * 6 * 3, dtype=np.uint8).reshape(8, 6, 3)
RAGGED = [np.full((2, 3), 1, np.float32), np.full((4, 2), 2, np.float32)]


def _torch_cuda():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    return torch


def test_tensor_round_trip():
    t = ndd.tensor(IMG, layout="HWC")
    g = t.gpu()
    assert g.device.device_type == "gpu" and g.device.device_id == 0
    assert g.shape == t.shape and g.dtype == t.dtype and g.layout == "HWC"
    back = g.cpu()
    assert back.device.device_type == "cpu"
    np.testing.assert_array_equal(np.asarray(back), IMG)
    assert g.gpu() is g  # already there: no copy
    np.testing.assert_array_equal(np.asarray(t.to_device("gpu").to_device("cpu")), IMG)
    with pytest.raises(TypeError):
        np.asarray(g)  # like ndd: no implicit device->host copy


def test_batch_round_trip_ragged():
    b = ndd.batch([IMG, IMG[:4, :2].copy()], layout="HWC")
    g = b.gpu()
    assert g.device.device_type == "gpu" and g.batch_size == 2
    assert g.shape == b.shape and g.layout == "HWC"
    for a, e in zip(g.cpu(), (IMG, IMG[:4, :2])):
        np.testing.assert_array_equal(np.asarray(a), e)
    np.testing.assert_array_equal(np.asarray(g.select(1).cpu()), IMG[:4, :2])


def test_cuda_array_interface():
    g = ndd.tensor(IMG, layout="HWC").gpu()
    cai = g.__cuda_array_interface__
    # DALI spells the type in numpy's character form ("=B"); what matters is that it means uint8
    assert tuple(cai["shape"]) == IMG.shape and np.dtype(cai["typestr"]) == np.uint8
    assert cai["data"][0] != 0
    with pytest.raises(AttributeError):
        ndd.tensor(IMG).__cuda_array_interface__  # CPU tensors have none


def test_dlpack_device():
    assert ndd.tensor(IMG).gpu().__dlpack_device__() == (2, 0)
    assert ndd.tensor(IMG).__dlpack_device__() == (1, 0)


def test_torch_on_cuda_values_dtype_device():
    torch = _torch_cuda()
    for arr, tdt in ((IMG, torch.uint8), (IMG.astype(np.float32) / 7, torch.float32),
                     (IMG.astype(np.int64), torch.int64)):
        g = ndd.tensor(arr).gpu()
        x = g.torch()
        assert x.is_cuda and x.device.index == 0 and x.dtype == tdt
        assert tuple(x.shape) == arr.shape
        np.testing.assert_array_equal(x.cpu().numpy(), arr)


def test_torch_zero_copy_and_copy():
    torch = _torch_cuda()
    g = ndd.tensor(IMG).gpu()
    ptr = g.__cuda_array_interface__["data"][0]
    view = g.torch(copy=False)
    assert view.data_ptr() == ptr  # zero copy
    dup = g.torch(copy=True)
    assert dup.data_ptr() != ptr
    torch.testing.assert_close(dup, view)
    # a uniform GPU batch converts without a copy as well
    b = ndd.batch([IMG, IMG + 1]).gpu()
    bt = b.torch(copy=False)
    assert bt.is_cuda and tuple(bt.shape) == (2,) + IMG.shape
    np.testing.assert_array_equal(bt.cpu().numpy(), np.stack([IMG, IMG + 1]))


def test_torch_pad_ragged_batch_on_cuda():
    torch = _torch_cuda()
    g = ndd.batch(RAGGED).gpu()
    with pytest.raises(ValueError):
        g.torch()
    with pytest.raises(ValueError):
        g.torch(copy=False)
    x = g.torch(pad=True)
    assert x.is_cuda and tuple(x.shape) == (2, 4, 3) and x.dtype == torch.float32
    exp = np.zeros((2, 4, 3), np.float32)
    exp[0, :2, :3] = 1
    exp[1, :4, :2] = 2
    np.testing.assert_array_equal(x.cpu().numpy(), exp)


def test_torch_from_dlpack_default_and_side_stream():
    torch = _torch_cuda()
    src = ndd.tensor(IMG.astype(np.float32)).gpu()
    x = torch.from_dlpack(src)
    assert x.is_cuda and x.data_ptr() == src.__cuda_array_interface__["data"][0]
    np.testing.assert_array_equal(x.cpu().numpy(), IMG.astype(np.float32))
    # produced by a DALI operator, consumed on another torch stream: the capsule's producer
    # must make that stream wait (torch passes its current stream to __dlpack__)
    s = torch.cuda.Stream()
    for _ in range(5):
        y = ndd.resize(ndd.tensor(IMG, layout="HWC").gpu(), resize_x=64, resize_y=64)
        ref = np.asarray(y.cpu())
        with torch.cuda.stream(s):
            z = torch.from_dlpack(y).float() * 1
        s.synchronize()
        np.testing.assert_array_equal(z.cpu().numpy(), ref.astype(np.float32))
    # an explicit stream argument is accepted (-1: no synchronisation, None: wait on host)
    assert src.__dlpack__(stream=None) is not None
    assert src.__dlpack__(stream=-1) is not None


def test_cupy_consumes_cai_and_dlpack():
    cp = pytest.importorskip("cupy")
    g = ndd.resize(ndd.tensor(IMG, layout="HWC").gpu(), resize_x=16, resize_y=16)
    ref = np.asarray(g.cpu())
    a = cp.asarray(g)  # __cuda_array_interface__ (with its stream, CuPy syncs on it)
    assert a.shape == ref.shape and a.dtype == ref.dtype
    np.testing.assert_array_equal(cp.asnumpy(a), ref)
    assert a.data.ptr == g.__cuda_array_interface__["data"][0]  # no copy
    d = cp.from_dlpack(g)
    np.testing.assert_array_equal(cp.asnumpy(d), ref)


def test_gpu_tensor_from_torch_cuda():
    torch = _torch_cuda()
    x = torch.arange(12, dtype=torch.int32, device="cuda").reshape(3, 4)
    t = ndd.as_tensor(x)
    np.testing.assert_array_equal(np.asarray(t.cpu()), np.arange(12, dtype=np.int32)
                                  .reshape(3, 4))
    # like native ndd, the data stays on the GPU it came from
    assert t.device.device_type == "gpu" and t.device.device_id == x.device.index


@pytest.mark.skipif(NGPU < 2, reason="needs 2 CUDA devices")
def test_second_gpu_placement():
    """.gpu(1) and EvalContext(device_id=1) put data and work on GPU 1, not the current one."""
    g = ndd.tensor(IMG, layout="HWC").gpu(1)
    assert g.device.device_id == 1
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        assert torch.from_dlpack(g).device.index == 1
    with ndd.EvalContext(device_id=1):
        y = ndd.flip(g, horizontal=1)
    assert y.device.device_id == 1
    np.testing.assert_array_equal(np.asarray(y.cpu()), IMG[:, ::-1])
