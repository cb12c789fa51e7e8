"""CPU interop: NumPy (__array__, np.asarray, np.from_dlpack), PyTorch CPU (.torch(),
torch.from_dlpack), JAX and CuPy where installed (skipped otherwise)."""

import numpy as np
import pytest

pytest.importorskip("nvidia.dali")

import dali_migrate.runtime as ndd  # noqa: E402

IMG = np.arange(8 * 6 * 3, dtype=np.uint8).reshape(8, 6, 3)
F32 = (np.arange(12, dtype=np.float32) / 3).reshape(3, 4)


def test_numpy_array_protocol():
    t = ndd.tensor(IMG, layout="HWC")
    a = np.asarray(t)
    assert a.dtype == np.uint8 and a.shape == IMG.shape
    np.testing.assert_array_equal(a, IMG)
    np.testing.assert_array_equal(t.__array__(), IMG)
    assert np.asarray(t, dtype=np.float32).dtype == np.float32
    c = np.array(t, copy=True)
    c[0, 0, 0] = 255
    assert np.asarray(t)[0, 0, 0] == IMG[0, 0, 0]
    # an operator's output converts the same way
    np.testing.assert_array_equal(np.asarray(ndd.flip(t, horizontal=1)), IMG[:, ::-1])


def test_numpy_view_and_dlpack():
    src = F32.copy()
    v = ndd.as_tensor(src)
    src[0, 0] = 42
    assert np.asarray(v)[0, 0] == 42  # as_tensor views host data
    np.testing.assert_array_equal(np.from_dlpack(ndd.tensor(F32)), F32)


def test_numpy_batch_samples_and_stack():
    b = ndd.batch([IMG, IMG + 1], layout="HWC")
    for t, e in zip(b, (IMG, IMG + 1)):
        np.testing.assert_array_equal(np.asarray(t), e)
    np.testing.assert_array_equal(np.asarray(ndd.as_tensor(b)), np.stack([IMG, IMG + 1]))


def test_torch_cpu():
    torch = pytest.importorskip("torch")
    t = ndd.tensor(F32)
    x = t.torch()
    assert x.dtype == torch.float32 and tuple(x.shape) == F32.shape and x.device.type == "cpu"
    np.testing.assert_array_equal(x.numpy(), F32)
    y = torch.from_dlpack(t)
    np.testing.assert_array_equal(y.numpy(), F32)
    # copy=False shares memory with the tensor, copy=True does not
    shared = t.torch(copy=False)
    assert shared.data_ptr() == t.torch(copy=False).data_ptr()
    assert t.torch(copy=True).data_ptr() != shared.data_ptr()
    for arr, dt in ((IMG, torch.uint8), (IMG.astype(np.int64), torch.int64),
                    (IMG.astype(np.int16), torch.int16), (IMG > 5, torch.bool)):
        assert ndd.tensor(arr).torch().dtype == dt
    # batches: uniform -> stacked; ragged -> ValueError unless pad=True
    b = ndd.batch([IMG, IMG + 1])
    assert tuple(b.torch().shape) == (2,) + IMG.shape
    r = ndd.batch([np.ones((2, 3), np.float32), np.ones((1, 4), np.float32)])
    with pytest.raises(ValueError):
        r.torch()
    p = r.torch(pad=True)
    assert tuple(p.shape) == (2, 2, 4) and float(p.sum()) == 10.0


def test_torch_tensor_into_runtime():
    torch = pytest.importorskip("torch")
    x = torch.arange(6, dtype=torch.int32).reshape(2, 3)
    t = ndd.as_tensor(x)
    assert t.dtype == ndd.int32 and t.shape == (2, 3)
    np.testing.assert_array_equal(np.asarray(t), x.numpy())
    np.testing.assert_array_equal(np.asarray(ndd.tensor(x) + 1), x.numpy() + 1)


def test_jax_cpu():
    jnp = pytest.importorskip("jax.numpy")
    import jax

    t = ndd.tensor(F32)
    a = jnp.asarray(np.asarray(t))
    np.testing.assert_array_equal(np.asarray(a), F32)
    d = jax.dlpack.from_dlpack(t)
    np.testing.assert_array_equal(np.asarray(d), F32)
    back = ndd.as_tensor(np.asarray(a))
    np.testing.assert_array_equal(np.asarray(back), F32)


def test_cupy_from_host_tensor():
    cp = pytest.importorskip("cupy")
    from dali_migrate.runtime import _backend

    if _backend.cuda_device_count() == 0:
        pytest.skip("CuPy needs a CUDA device")
    a = cp.asarray(np.asarray(ndd.tensor(F32)))
    np.testing.assert_array_equal(cp.asnumpy(a), F32)
