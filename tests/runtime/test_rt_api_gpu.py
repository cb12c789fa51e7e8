"""GPU side of the streams / thread pool / imread API (skipped without a CUDA device).

Run on a GPU machine: `python -m pytest -q tests/runtime/test_rt_api_gpu.py` (plus the CPU-side
files tests/runtime/test_rt_api_*.py, which also run there)."""

import threading

import numpy as np
import pytest

pytest.importorskip("nvidia.dali")

import dali_migrate.runtime as ndd  # noqa: E402
from dali_migrate.runtime import _backend, _stream  # noqa: E402

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(_backend.cuda_device_count() == 0, reason="no CUDA device")]

IMG = np.arange(16 * 12 * 3, dtype=np.uint8).reshape(16, 12, 3)


@pytest.fixture(autouse=True)
def _clean_streams():
    yield
    _stream._global_streams.clear()
    _stream._tls.current.clear()
    _stream._bump()


def _flip_ok(out):
    np.testing.assert_array_equal(np.asarray(out.cpu()), IMG[:, ::-1])


def test_new_stream():
    s = ndd.stream()
    assert isinstance(s, ndd.Stream) and s.device_id == 0 and s.handle
    s.synchronize()
    assert ndd.stream(stream=s) is s
    assert ndd.Stream(stream=s) == s and s == s.handle  # raw handle compares equal
    s1 = ndd.stream(device_id=0)
    assert s1 != s
    assert ndd.stream(stream=s.handle).device_id == 0  # device from the driver


def test_default_context_stream_is_lazy_and_stable():
    a = ndd.get_current_stream()
    assert isinstance(a, ndd.Stream) and a.device_id == 0
    assert ndd.get_current_stream() is a
    assert ndd.EvalContext().cuda_stream == a
    assert ndd.EvalContext.default().cuda_stream is a
    # it is the runtime's per-device stream, the one GPU operators used before
    assert a.handle == _backend.default_stream(0).handle


def test_set_default_stream():
    s = ndd.stream()
    ndd.set_default_stream(s)
    assert ndd.get_default_stream() == s and ndd.get_default_stream(0) == s
    assert ndd.get_current_stream() == s
    with ndd.EvalContext():
        _flip_ok(ndd.flip(ndd.tensor(IMG, layout="HWC").gpu(), horizontal=1))
    ndd.set_default_stream(None)
    assert ndd.get_default_stream() is None
    assert ndd.get_current_stream() != s


def test_set_current_stream_is_per_thread():
    s = ndd.stream()
    ndd.set_current_stream(s)
    assert ndd.get_current_stream() == s
    assert ndd.EvalContext().cuda_stream == s  # new contexts copy it
    other = []
    th = threading.Thread(target=lambda: other.append(ndd.get_current_stream()))
    th.start()
    th.join()
    assert other[0] is not None and other[0] != s
    ndd.set_current_stream(None)
    assert ndd.get_current_stream() != s


def test_context_with_own_stream_runs_ops_on_it():
    s = ndd.stream()
    with ndd.EvalContext(cuda_stream=s) as ctx:
        assert ctx.cuda_stream is s
        t = ndd.tensor(IMG, layout="HWC").gpu()
        out = ndd.flip(t, horizontal=1)
        b = ndd.flip(ndd.batch([IMG, IMG], layout="HWC").gpu(), horizontal=1)
    s.synchronize()
    _flip_ok(out)
    np.testing.assert_array_equal(np.asarray(b.cpu().select(1)), IMG[:, ::-1])


def test_torch_stream_and_dlpack():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    ts = torch.cuda.Stream()
    s = ndd.stream(stream=ts)
    assert s.handle == ts.cuda_stream and s.device_id == ts.device.index
    with ndd.EvalContext(cuda_stream=ts):
        out = ndd.flip(ndd.tensor(IMG, layout="HWC").gpu(), horizontal=1)
    # consumer on another torch stream: DLPack makes it wait for the producer (stream-safe)
    consumer = torch.cuda.Stream()
    with torch.cuda.stream(consumer):
        tt = torch.from_dlpack(out)
        res = (tt.to(torch.int32) + 0).cpu().numpy()
    np.testing.assert_array_equal(res, IMG[:, ::-1].astype(np.int32))


def test_gpu_op_on_other_device_ignores_mismatched_stream():
    if _backend.cuda_device_count() < 2:
        pytest.skip("needs 2 CUDA devices")
    s0 = ndd.stream(device_id=0)
    with ndd.EvalContext(cuda_stream=s0):
        out = ndd.flip(ndd.tensor(IMG, layout="HWC").gpu(1), horizontal=1)
    assert out.device == ndd.Device("gpu", 1)
    _flip_ok(out)


def test_thread_pool_for_gpu_device():
    tp = ndd.ThreadPool(2, device_id=0)
    assert tp.device_id == 0
    with ndd.EvalContext(device_id=0, thread_pool=tp):
        _flip_ok(ndd.flip(ndd.tensor(IMG, layout="HWC").gpu(), horizontal=1))


def test_imread_gpu(image_dir):
    import pathlib

    f = sorted(str(p) for p in pathlib.Path(image_dir).rglob("*.jpg"))[:2]
    gpu = ndd.imread(f, device="gpu")
    assert gpu.device.device_type == "gpu" and gpu.batch_size == 2
    for i in range(2):
        # imread is io.file.read + decoders.image: the same GPU decode of the same bytes
        ref = ndd.decoders.image(ndd.tensor(np.fromfile(f[i], dtype=np.uint8)), device="gpu")
        np.testing.assert_array_equal(np.asarray(gpu.cpu().select(i)), np.asarray(ref.cpu()))


def test_external_source_to_gpu():
    es = ndd.ExternalSource(lambda: IMG, device="gpu", layout="HWC")
    t = es()
    assert t.device.device_type == "gpu"
    np.testing.assert_array_equal(np.asarray(t.cpu()), IMG)


def test_reader_checkpoint_with_gpu_stream(image_dir):
    if _backend.use_pipeline():
        pytest.skip("checkpointing needs the direct backend path")
    s = ndd.stream()
    with ndd.EvalContext(cuda_stream=s):
        r = ndd.readers.File(file_root=image_dir, random_shuffle=True, seed=3,
                             enable_checkpointing=True)
        it = r.next_epoch(batch_size=4)
        next(it)
        ck = ndd.checkpoint.Checkpoint()
        ck.register(r, "r")
        ck.collect()
        rest = [bytes(np.asarray(j.select(0))) for j, _ in it]
    r2 = ndd.readers.File(file_root=image_dir, random_shuffle=True, seed=3,
                          enable_checkpointing=True)
    ck2 = ndd.checkpoint.Checkpoint()
    ck2.deserialize(ck.serialize())
    ck2.register(r2, "r")
    again = [bytes(np.asarray(j.select(0))) for j, _ in r2.next_epoch(batch_size=4)]
    assert again[:len(rest)] == rest
