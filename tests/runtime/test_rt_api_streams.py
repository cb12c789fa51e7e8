"""Streams API (CPU side): surface, errors and CPU-only behaviour as native ndd 2.4 on CPU.
GPU behaviour: test_rt_api_gpu.py."""

import threading

import pytest

pytest.importorskip("nvidia.dali")

from conftest import has_cuda  # noqa: E402

import dali_migrate.runtime as ndd  # noqa: E402
from dali_migrate.runtime import _stream  # noqa: E402

cpu_only = pytest.mark.skipif(has_cuda(), reason="CPU-only behaviour")


class FakeStream:
    """A third-party stream object (`__cuda_stream__` protocol); wrapping it needs no CUDA."""

    def __init__(self, handle, device_id=0):
        self._h = handle
        self.device_id = device_id

    def __cuda_stream__(self):
        return (0, self._h)


@pytest.fixture(autouse=True)
def _clean_streams():
    yield
    _stream._global_streams.clear()
    _stream._tls.current.clear()
    _stream._bump()
    _stream._trivial = None


def test_names():
    for name in ("Stream", "stream", "get_current_stream", "set_current_stream",
                 "get_default_stream", "set_default_stream"):
        assert callable(getattr(ndd, name))
    assert ndd.Stream.create_new is not None


def test_stream_none_and_errors():
    assert ndd.stream(stream=None) is None
    with pytest.raises(ValueError, match="must not be None"):
        ndd.Stream(stream=None)
    with pytest.raises(TypeError, match="Cannot interpret"):
        ndd.stream(stream="x")


def test_wrap_foreign_stream():
    f = FakeStream(1234, device_id=0)
    s = ndd.stream(stream=f)
    assert isinstance(s, ndd.Stream)
    assert (s.handle, s.device_id) == (1234, 0)
    assert s.__cuda_stream__() == (0, 1234)
    assert ndd.stream(stream=s) is s
    assert ndd.Stream(stream=s) == s
    assert s == FakeStream(1234, 0) and s != FakeStream(1235, 0) and s != FakeStream(1234, 1)
    assert s != None  # noqa: E711
    assert str(s) == "CUDA stream 1234, device_id=0"
    assert "device_id=0" in repr(s)
    with pytest.raises(ValueError, match="doesn't match"):
        ndd.stream(stream=f, device_id=1)
    with pytest.raises(ValueError, match="doesn't match"):
        ndd.stream(stream=s, device_id=1)
    assert ndd.stream(stream=FakeStream(7, 3)).device_id == 3


@cpu_only
def test_cpu_streams_are_none():
    assert ndd.get_current_stream() is None
    assert ndd.get_default_stream() is None
    assert ndd.get_default_stream(0) is None
    assert ndd.EvalContext().cuda_stream is None
    assert ndd.EvalContext.default().cuda_stream is None
    # converted code passes the pipeline's device_id: fine on a CPU-only host
    assert ndd.EvalContext(device_id=0).cuda_stream is None
    ndd.set_current_stream(None)  # no-op, as native
    assert ndd.get_current_stream() is None


def test_explicit_context_stream():
    f = FakeStream(99, device_id=0)
    ctx = ndd.EvalContext(cuda_stream=f)
    assert isinstance(ctx.cuda_stream, ndd.Stream)
    assert ctx.cuda_stream == f
    with pytest.raises(ValueError, match="doesn't match"):
        ndd.EvalContext(device_id=1, cuda_stream=f)


def test_default_stream_set_get_clear():
    f = FakeStream(5, device_id=0)
    ndd.set_default_stream(f)
    assert ndd.get_default_stream(0) == f
    assert ndd.EvalContext(device_id=0).cuda_stream == f
    ndd.set_default_stream(None, device_id=0)
    assert ndd.get_default_stream(0) is None


def test_current_stream_is_per_thread_and_copied_into_new_contexts():
    f = FakeStream(11, device_id=0)
    ndd.set_current_stream(f)
    assert ndd.get_current_stream() == f
    assert ndd.EvalContext().cuda_stream == f  # a new context copies it
    seen = []
    th = threading.Thread(target=lambda: seen.append(_stream._thread_current(0)))
    th.start()
    th.join()
    assert seen == [None]  # another thread's current stream is its own
    ctx_before_reset = ndd.EvalContext()
    ndd.set_current_stream(None)
    assert ctx_before_reset.cuda_stream == f  # native: copied at construction
    with pytest.raises(ValueError, match="doesn't match"):
        ndd.set_current_stream(FakeStream(3, device_id=1))  # current device is 0


def test_cpu_ops_unaffected_by_stream_api():
    import numpy as np

    t = ndd.tensor(np.arange(12, dtype=np.uint8).reshape(2, 2, 3), layout="HWC")
    with ndd.EvalContext(num_threads=1):
        np.testing.assert_array_equal(np.asarray(ndd.flip(t, horizontal=1)),
                                      np.asarray(t)[:, ::-1])
