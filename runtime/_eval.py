"""EvalMode, EvalContext and the thread-count setting, API-compatible with native ndd.

The runtime evaluates every call synchronously (what native calls `sync_cpu`): results are the
same in all modes, only the moment an error surfaces differs. EvalMode is kept so code that
enters `with ndd.EvalMode.deferred:` runs unchanged.
"""

import enum
import os
import threading

from . import _backend


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
    return _global_num_threads or _default_num_threads()


def set_num_threads(n):
    global _global_num_threads
    if n is not None:
        if not isinstance(n, int):
            raise TypeError("The number of threads must be an integer")
        if n <= 0:
            raise ValueError(f"The number of threads must be positive; got {n}.")
    _global_num_threads = n


class EvalContext:
    """Thread pool + device (+ CUDA stream later) that operators run with."""

    def __init__(self, *, num_threads=None, device_id=None, cuda_stream=None, thread_pool=None):
        self._num_threads = num_threads
        self._device_id = device_id
        self._cuda_stream = cuda_stream
        self._pool = thread_pool  # a backend pool or None (made on first use)
        self._pool_threads = None

    @property
    def num_threads(self):
        return self._num_threads or get_num_threads()

    @property
    def device_id(self):
        return self._device_id

    @property
    def cuda_stream(self):
        return self._cuda_stream

    @property
    def thread_pool(self):
        n = self.num_threads
        if self._pool is None or self._pool_threads != n:
            # Recreated when set_num_threads changed the count (ndd does the same).
            self._pool = _backend.ThreadPool(n, self._device_id)
            self._pool_threads = n
        return self._pool

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
        return self

    def __exit__(self, *exc):
        _tls.contexts.pop()


class _TLS(threading.local):
    def __init__(self):
        self.modes = [EvalMode.default]
        self.contexts = []


_tls = _TLS()
_default = None


def _default_context():
    global _default
    if _default is None:
        _default = EvalContext()
    return _default


__all__ = ["EvalMode", "EvalContext", "get_num_threads", "set_num_threads"]
