"""EvalMode, EvalContext and the thread-count setting, API-compatible with native ndd.

The runtime evaluates every call synchronously (what native calls `sync_cpu`): results are the
same in all modes, only the moment an error surfaces differs (here: always at the call site).
EvalMode is kept so code that enters `with ndd.EvalMode.deferred:` runs unchanged.

Like native, each thread has its own default context (per device), so `set_current_stream` is
per thread; contexts made without `num_threads=`/`thread_pool=` follow `set_num_threads`.
"""

import enum
import os
import threading

from . import _backend, _device, _stream


class EvalMode(enum.Enum):
    deferred = 1
    eager = 2
    sync_cpu = 3
    sync_full = 4
    default = 2  # alias of eager, as in ndd

    def __enter__(self):
        _tls.modes.append(self)
        return self

    def __exit__(self, *exc):
        _tls.modes.pop()

    @staticmethod
    def current():
        return _tls.modes[-1]


_global_num_threads = None


def _default_num_threads():
    env = os.environ.get("DALI_NUM_THREADS")
    return int(env) if env else len(os.sched_getaffinity(0))


def get_num_threads():
    """The value set with `set_num_threads`, else DALI_NUM_THREADS, else the CPU affinity size."""
    return _global_num_threads or _default_num_threads()


def set_num_threads(n):
    """Set (None: clear) the thread count of every context without its own count or pool,
    existing ones included (they get a new pool on their next call), as native ndd."""
    global _global_num_threads
    if n is not None:
        if not isinstance(n, int):
            raise TypeError("The number of threads must be an integer")
        if n <= 0:
            raise ValueError(f"The number of threads must be positive; got {n}.")
        core_count = os.cpu_count() or 1
        if n > core_count * 100:
            raise ValueError(f"The number of threads per CPU core must not exceed 100.\n"
                             f"Got {n} threads for {core_count} cores.")
    _global_num_threads = n


class EvalContext:
    """Thread pool + device + CUDA stream that operators run with (native ndd's EvalContext).

    thread_pool: a `ThreadPool` to use (its device_id must match the context's); exclusive with
    num_threads. num_threads: a pool of this size, made on first use. device_id: the GPU of
    the context (not validated against the machine, so converted code passing a pipeline's
    device_id runs on CPU-only hosts). cuda_stream: a stream-like object (see `stream()`); else
    the thread's current stream, the default stream or a per-device one, resolved lazily.
    """

    _default_context_stream_sentinel = object()

    def __init__(self, *, num_threads=None, device_id=None, cuda_stream=None, thread_pool=None):
        self._device_id = device_id
        self._pool = None  # backend pool in use (made on first use unless given)
        self._pool_threads = None
        self._own_pool = thread_pool is not None
        self._checkpoint = None
        self._stream_cache = None  # (stream version, device, stream)
        if thread_pool is not None:
            if num_threads is not None:
                raise ValueError("`thread_pool` and `num_threads` cannot be specified together.")
            pool_dev = getattr(thread_pool, "device_id", None)
            if pool_dev != device_id:
                shown = device_id if device_id is not None else "<Current> (None)"
                raise ValueError(f"Device ID clash: device_id == {shown} but "
                                 f"thread_pool.device_id == {pool_dev}")
            num_threads = thread_pool.num_threads
            self._pool = thread_pool
            self._pool_threads = num_threads
        self._num_threads = num_threads
        if cuda_stream is EvalContext._default_context_stream_sentinel:
            self._cuda_stream = None
        elif cuda_stream is not None:
            self._cuda_stream = _stream.stream(stream=cuda_stream, device_id=device_id)
        else:
            # A stream set with set_current_stream on this thread is copied (native does so);
            # nothing touches CUDA unless one was set.
            cur = _stream._tls.current
            if cur:
                dev = device_id if device_id is not None else _stream._current_device_for_streams()
                self._cuda_stream = cur.get(dev)
            else:
                self._cuda_stream = None

    @property
    def num_threads(self):
        return self._num_threads or get_num_threads()

    @property
    def device_id(self):
        return self._device_id

    @property
    def cuda_stream(self):
        """The context's stream: its own, else the thread's current one, the default one
        (`set_default_stream`) or a per-device stream made on first use; None where there is
        no CUDA device and no stream was set."""
        s = self._cuda_stream
        if s is not None:
            return s
        t = _stream._trivial  # no CUDA and no stream ever set: the per-call fast path (CPU)
        if t or (t is None and _stream._probe_trivial()):
            return None
        dev = self._device_id
        if dev is None:
            dev = _device._current_gpu_id()
        c = self._stream_cache
        if c is not None and c[0] == _stream._version and c[1] == dev:
            return c[2]
        s = _stream._resolve(dev)
        self._stream_cache = (_stream._version, dev, s)
        return s

    @property
    def thread_pool(self):
        if self._own_pool:
            return self._pool
        n = self.num_threads
        if self._pool is None or self._pool_threads != n:
            # Recreated when set_num_threads changed the count (ndd does the same).
            self._pool = _backend.ThreadPool(n, self._device_id)
            self._pool_threads = n
        return self._pool

    @property
    def checkpoint(self):
        """The `checkpoint.Checkpoint` bound to this context (call `clear()` on it before
        reusing a context, e.g. the default one, for another pipeline)."""
        if self._checkpoint is None:
            from .checkpoint import Checkpoint

            self._checkpoint = Checkpoint()
        return self._checkpoint

    def evaluate_all(self):
        """Nothing is pending: every call already ran."""

    @staticmethod
    def current():
        stack = _tls.contexts
        return stack[-1] if stack else _default_context()

    @staticmethod
    def default():
        return _default_context()

    def __enter__(self):
        _tls.contexts.append(self)
        # As in native ndd, a context with a device makes it the current one: `device="gpu"`
        # inside `with EvalContext(device_id=1)` means gpu:1 (one converted loop per rank).
        self._entered_device = None
        if self.device_id is not None:
            self._entered_device = _device.Device("gpu", self.device_id)
            self._entered_device.__enter__()
        return self

    def __exit__(self, *exc):
        if getattr(self, "_entered_device", None) is not None:
            self._entered_device.__exit__(*exc)
            self._entered_device = None
        _tls.contexts.pop()


class _TLS(threading.local):
    def __init__(self):
        self.modes = [EvalMode.default]
        self.contexts = []
        self.default = None  # this thread's default context


_tls = _TLS()


def _default_context():
    d = _tls.default
    if d is None:
        d = _tls.default = EvalContext(cuda_stream=EvalContext._default_context_stream_sentinel)
    return d


__all__ = ["EvalMode", "EvalContext", "get_num_threads", "set_num_threads"]
