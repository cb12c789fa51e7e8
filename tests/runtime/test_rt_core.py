"""Tensor / Batch / operator-call behaviour of the runtime, checked against native ndd."""

import numpy as np
import pytest

pytest.importorskip("nvidia.dali")
native = pytest.importorskip("nvidia.dali.experimental.dynamic")

from conftest import requires_native_ndd  # noqa: E402

import dali_migrate.runtime as ndd  # noqa: E402
from dali_migrate.runtime import _backend  # noqa: E402

IMG = np.arange(8 * 6 * 3, dtype=np.uint8).reshape(8, 6, 3)


def arr(x):
    return np.asarray(x)


@requires_native_ndd
@pytest.mark.parametrize("value", [3.0, 1, True, [1.0, 2.0], [1, 2], np.float64(2.0),
                                   np.arange(3), IMG])
def test_tensor_dtype_shape_like_native(value):
    a, b = ndd.tensor(value), native.tensor(value)
    assert str(a.dtype) == str(b.dtype)
    assert a.shape == b.shape
    np.testing.assert_array_equal(arr(a), arr(b))


def test_tensor_properties():
    t = ndd.tensor(IMG, layout="HWC")
    assert t.layout == "HWC" and t.ndim == 3 and t.device == ndd.Device("cpu")
    assert t.dtype == ndd.uint8 and t.nbytes == IMG.nbytes and t.size == IMG.size
    assert t.__dlpack_device__() == (1, 0)
    np.testing.assert_array_equal(np.from_dlpack(t), IMG)
    assert t.torch().shape == (8, 6, 3)
    assert ndd.tensor(5).item() == 5
    with pytest.raises(AttributeError):
        t.__cuda_array_interface__


@requires_native_ndd
def test_tensor_cast_like_native():
    x = np.array([1.7, -1.7, 300.6])
    for dt, ndt in ((ndd.int32, native.int32), (ndd.uint8, native.uint8)):
        np.testing.assert_array_equal(arr(ndd.tensor(x, dtype=dt)), arr(native.tensor(x, dtype=ndt)))


def test_tensor_copy_vs_view():
    a = np.zeros(4, np.float32)
    v, c = ndd.as_tensor(a), ndd.tensor(a)
    a[0] = 5
    assert arr(v)[0] == 5 and arr(c)[0] == 0


@requires_native_ndd
def test_indexing_like_native():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    a, b = ndd.tensor(x), native.tensor(x)
    for idx in (1, (slice(None), slice(1, 3)), (-1, slice(None, None, 2)), (Ellipsis, 0)):
        np.testing.assert_array_equal(arr(a[idx]), arr(b[idx]))


@pytest.mark.parametrize("op", ["+", "-", "*", "/", "//", "%", "**", "==", "!=", "<", "<=",
                                ">", ">="])
@requires_native_ndd
def test_arithmetic_like_native(op):
    x = np.arange(1, 7, dtype=np.int32).reshape(2, 3)
    f = eval(f"lambda a, b: a {op} b")
    for lhs, rhs in ((ndd.tensor(x), 2), (ndd.tensor(x), ndd.tensor(x)), (3, ndd.tensor(x))):
        nl = native.tensor(arr(lhs)) if isinstance(lhs, ndd.Tensor) else lhs
        nr = native.tensor(arr(rhs)) if isinstance(rhs, ndd.Tensor) else rhs
        a, b = f(lhs, rhs), f(nl, nr)
        assert str(a.dtype) == str(b.dtype)
        np.testing.assert_array_equal(arr(a), arr(b))
    np.testing.assert_array_equal(arr(-ndd.tensor(x)), -x)


def test_math_module():
    x = ndd.tensor(np.array([1.0, 4.0], np.float32))
    np.testing.assert_allclose(arr(ndd.math.sqrt(x)), [1.0, 2.0])
    np.testing.assert_allclose(arr(ndd.math.clamp(x, 2.0, 3.0)), [2.0, 3.0])


def test_batch_basics():
    b = ndd.batch([np.zeros((2, 3), np.uint8), np.ones((3, 3), np.uint8)], layout="HW")
    with pytest.raises(TypeError, match="'Batch' object is not subscriptable"):
        b[0]
    assert b.batch_size == 2 and b.shape == [(2, 3), (3, 3)] and b.layout == "HW"
    assert b.dtype == ndd.uint8 and b.ndim == 2
    ts = list(b)
    assert all(isinstance(t, ndd.Tensor) for t in ts) and ts[1].shape == (3, 3)
    assert isinstance(b.select(1), ndd.Tensor)
    assert b.select(slice(0, 1)).batch_size == 1
    assert b.select([1, 0]).shape == [(3, 3), (2, 3)]
    assert len(b.tensors) == 2
    assert b.slice[0].shape == [(3,), (3,)]
    assert b.slice[:, 1:].shape == [(2, 2), (3, 2)]
    with pytest.raises(ValueError, match="non-uniform"):
        b.torch()
    assert b.torch(pad=True).shape == (2, 3, 3)
    assert ndd.batch([1, 2, 3]).dtype == ndd.int32
    assert ndd.as_batch(np.zeros((4, 2, 2))).shape == [(2, 2)] * 4


def test_batch_torch_and_broadcast():
    torch = pytest.importorskip("torch")
    b = ndd.batch(torch.zeros(3, 2))
    assert b.shape == [(2,)] * 3
    t = b.torch(copy=True)
    assert tuple(t.shape) == (3, 2)
    bb = ndd.Batch.broadcast(ndd.tensor([1, 2]), 5)
    assert bb.batch_size == 5 and bb.shape == [(2,)] * 5


def test_ops_tensor_in_tensor_out_and_batch_in_batch_out():
    t = ndd.tensor(IMG, layout="HWC")
    y = ndd.flip(t, horizontal=1)
    assert isinstance(y, ndd.Tensor)
    np.testing.assert_array_equal(arr(y), IMG[:, ::-1])
    b = ndd.batch([IMG, IMG[:4]], layout="HWC")
    yb = ndd.flip(b, vertical=1, horizontal=0)
    assert isinstance(yb, ndd.Batch) and yb.batch_size == 2
    np.testing.assert_array_equal(arr(yb.select(1)), IMG[:4][::-1])


def test_op_argument_inputs_and_types():
    b = ndd.batch([IMG, IMG], layout="HWC")
    # per-sample tensor argument from a Batch; scalar broadcast; DALI / ndd dtypes
    h = ndd.batch([np.int32(1), np.int32(0)])
    out = ndd.flip(b, horizontal=h)
    np.testing.assert_array_equal(arr(out.select(0)), IMG[:, ::-1])
    np.testing.assert_array_equal(arr(out.select(1)), IMG)
    c1 = ndd.cast(ndd.tensor(IMG), dtype=ndd.float32)
    c2 = ndd.cast(ndd.tensor(IMG), dtype=_backend._types.FLOAT)
    assert c1.dtype == c2.dtype == ndd.float32


def test_multiple_outputs_tuple():
    x = ndd.tensor(np.array([0, 0, 1, 1, 1, 0], np.uint8))
    res = ndd.segmentation.random_object_bbox(x) if False else ndd.nonsilent_region(
        ndd.tensor(np.array([0, 0, 5, 5, 5, 0], np.float32)), cutoff_db=-10)
    assert isinstance(res, tuple) and len(res) == 2


def test_no_input_ops_batch_size():
    u = ndd.random.uniform(range=(0, 1), shape=[2])
    assert isinstance(u, ndd.Tensor) and u.shape == (2,)
    ub = ndd.random.uniform(range=(0, 1), shape=[2], batch_size=3)
    assert isinstance(ub, ndd.Batch) and ub.shape == [(2,)] * 3


def test_module_layout_like_native():
    for path in ("decoders.image", "random.uniform", "noise.gaussian", "transforms.rotation",
                 "readers.File", "equalize", "experimental.median_blur", "reductions.mean",
                 "math.sqrt", "decoders.video", "cast_like"):
        obj_n, obj_o = native, ndd
        for part in path.split("."):
            obj_n, obj_o = getattr(obj_n, part, None), getattr(obj_o, part, None)
        if obj_n is None:
            continue
        assert obj_o is not None, path


def test_eval_mode_context_and_threads(monkeypatch):
    with ndd.EvalMode.deferred:
        assert ndd.EvalMode.current() is ndd.EvalMode.deferred
        y = ndd.flip(ndd.tensor(IMG, layout="HWC"), horizontal=1)
    np.testing.assert_array_equal(arr(y.evaluate()), IMG[:, ::-1])
    with ndd.EvalContext(num_threads=2) as ctx:
        assert ctx.num_threads == 2 and ndd.EvalContext.current() is ctx
        ndd.flip(ndd.tensor(IMG, layout="HWC"), horizontal=1)
    monkeypatch.setenv("DALI_NUM_THREADS", "3")
    ndd.set_num_threads(None)
    assert ndd.get_num_threads() == 3
    ndd.set_num_threads(2)
    assert ndd.get_num_threads() == 2
    ndd.set_num_threads(None)
    with pytest.raises(ValueError):
        ndd.set_num_threads(0)


def test_device_api():
    d = ndd.Device("cpu")
    assert str(d) == "cpu" and d == "cpu" and ndd.Device.current() == d
    with pytest.raises(ValueError, match="Invalid device type: mixed"):
        ndd.Device("mixed")


def test_pipeline_fallback_backend(monkeypatch):
    """The public-API fallback (one-op Pipeline) gives the same results."""
    monkeypatch.setattr(_backend, "USE_PIPELINE", True)
    op = _backend.Operator("Flip", "cpu", {"horizontal": 1}, [("cpu", 3, ndd.uint8.type_id,
                                                                  "HWC")], {}, 2, 1)
    tl = _backend.TensorListCPU(np.stack([IMG, IMG]), "HWC")
    (out,) = op.run(None, [tl], {}, 2)
    np.testing.assert_array_equal(np.asarray(out[1]), IMG[:, ::-1])


def test_reader_does_not_leave_its_context_entered_between_batches(tmp_path):
    """Code between two batches of next_epoch runs in the caller's context, not the reader's."""
    from PIL import Image

    for i in range(4):
        Image.new("RGB", (4, 4)).save(tmp_path / f"{i}.jpg")
    ctx = ndd.EvalContext(num_threads=1)
    reader = ndd.readers.File(files=[str(tmp_path / f"{i}.jpg") for i in range(4)])
    epoch = reader.next_epoch(batch_size=2, ctx=ctx)
    next(epoch)
    assert ndd.EvalContext.current() is not ctx
    next(epoch)
    assert ndd.EvalContext.current() is not ctx
