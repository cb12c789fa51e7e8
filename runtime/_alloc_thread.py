"""Where DALI's host pool does not serve them (runtime/_host_pool.py: a pipeline made DALI's host
resource before the runtime was imported, or the user chose a threshold above the outputs), CPU
operator calls with large outputs run on a thread of their own, so that their buffers come from
a C heap that holds nothing else.

Why: an eager call allocates its outputs anew (native ndd does too), on the calling thread. On
the main thread those multi-megabyte buffers share glibc's main arena with the interpreter's
own allocations, which pin its top: freed buffers cannot be given back and new ones of another
size do not fit the holes. Measured on the CPU loop of `benchmarks/bench_loop.py` (batch 32):
75 MB in use held 780 MB of RSS (640 MB free chunks of the main arena), and separate runs ended
anywhere between 290 and 890 MB. Pipeline mode allocates on its executor's threads and reuses
its buffers. The same calls run here on a thread that only runs operators: its arena holds
DALI's buffers alone, freed ones fit the next batch's, and RSS stays within a few percent of
pipeline mode's, flat. Returning memory instead (a fixed mmap threshold, or `malloc_trim`)
capped RSS too, but every batch's pages then faulted in again: 0.76-0.81 of the throughput.

The hand-over costs tens of microseconds, so only an operator instance whose last measured
outputs reached `LARGE_BYTES` goes over (measured on its first call and again every
`_RECHECK` calls); small calls, GPU operators and calls already on a runtime thread run where
they are called. The caller waits for the call: results, errors and their order are the same.
`DALI_MIGRATE_ALLOC_THREAD=0` keeps every call on its caller's thread, `=1` uses the thread
even where the pool serves the buffers.

The thread has a cost the pool has not: its arena gives a heap back to the system when the heap
empties and takes it again for the next batch (about 2,000 page faults per iteration of the CPU
loop; docs/performance.md).
"""

import concurrent.futures
import os
import threading

import numpy as np

from . import _host_pool, _types

LARGE_BYTES = 1 << 20
_RECHECK = 256

# "1" on, "0" off; unset: on only where DALI's host pool does not serve large buffers (None: not
# asked yet; runtime/_host_pool.py)
_ENABLED = {"1": True, "0": False}.get(os.environ.get("DALI_MIGRATE_ALLOC_THREAD", ""))
_tls = threading.local()
_lock = threading.Lock()
_executors = {}


def _itemsize(type_id):
    dt = _types._by_id.get(type_id)
    return dt.bytes if dt is not None else 1  # a type without a DType: counted as bytes


def output_bytes(outs):
    """Bytes held by a call's outputs (TensorLists)."""
    total = 0
    for tl in outs:
        shape = tl.shape()
        if shape:
            total += int(np.prod(np.asarray(shape, dtype=np.int64), axis=-1).sum()) * \
                _itemsize(tl.dtype)
    return total


def _mark_runtime_thread():
    _tls.runtime = True


def on_runtime_thread():
    return getattr(_tls, "runtime", False)


def runtime_thread(name):
    """The one-thread executor `name` ("alloc", and runtime/_ahead.py's "read-ahead" and
    "work-ahead"), its thread marked as the runtime's: operator calls made there stay there."""
    with _lock:
        ex = _executors.get(name)
        if ex is None:
            ex = _executors[name] = concurrent.futures.ThreadPoolExecutor(
                1, thread_name_prefix=f"dali-migrate-{name}", initializer=_mark_runtime_thread)
        return ex


def _forget_after_fork():
    _executors.clear()  # their threads did not survive the fork


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


def _decide():
    global _ENABLED
    _ENABLED = not _host_pool.pooled()


class Placement:
    """Per operator instance: whether its calls go to the allocation thread."""

    __slots__ = ("large", "calls")

    def __init__(self):
        self.large = None  # unknown until the first call's outputs are measured
        self.calls = 0

    def run(self, fn, *args):
        if _ENABLED is None:
            _decide()
        if not _ENABLED or on_runtime_thread():
            return fn(*args)
        self.calls += 1
        outs = runtime_thread("alloc").submit(fn, *args).result() if self.large else fn(*args)
        if self.large is None or self.calls % _RECHECK == 0:
            self.large = output_bytes(outs) >= LARGE_BYTES
        return outs
