"""`ThreadPool`, `get_num_threads`, `set_num_threads` (native ndd's `_thread_pool.py` API).

Semantics as native 2.4 (checked against it on CPU):
- `get_num_threads()`: the value given to `set_num_threads`, else `DALI_NUM_THREADS`, else the
  size of the process's CPU affinity set.
- `set_num_threads(n)` DOES affect existing contexts: every `EvalContext` built without
  `num_threads=`/`thread_pool=` (the default contexts included) switches to a pool of the new
  size on its next operator call; contexts with their own count or pool keep it.
- `EvalContext(thread_pool=tp)` uses `tp` as is; `thread_pool=` and `num_threads=` together
  raise ValueError; the pool's `device_id` must match the context's.
"""

import operator as _operator

from . import _backend as _be
from ._eval import get_num_threads, set_num_threads  # noqa: F401 - re-exported

_CURRENT_DEVICE_ID = -1


class ThreadPool(_be.ThreadPool):
    """A pool of worker threads for CPU operators.

    num_threads: default `get_num_threads()`. device_id: the GPU the pool's threads are bound
    to; default the current device (`Device.current()`, CPU unless inside `with Device("gpu")`
    in this runtime), None for none.

    A pool runs one operator at a time: share it between contexts of one thread, not between
    threads running operators concurrently.
    """

    def __init__(self, num_threads=None, *, device_id=_CURRENT_DEVICE_ID):
        if device_id == _CURRENT_DEVICE_ID:
            from ._device import Device

            device_id = Device.current().device_id
        if num_threads is None:
            num_threads = get_num_threads()
        if isinstance(num_threads, bool) or not isinstance(num_threads, int):
            try:
                num_threads = _operator.index(num_threads)
            except TypeError:
                raise TypeError(f"The number of threads must be an integer; got "
                                f"{type(num_threads).__name__}") from None
        if num_threads < 0:
            raise ValueError(f"The number of threads must not be negative; got {num_threads}.")
        super().__init__(num_threads, device_id)

    def __repr__(self):
        return f"ThreadPool(num_threads={self.num_threads}, device_id={self.device_id})"


__all__ = ["ThreadPool", "get_num_threads", "set_num_threads"]
