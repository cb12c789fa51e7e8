"""Large host buffers of eager calls come from DALI's own memory pool.

Why: an eager call allocates its outputs anew (native ndd does too), where pipeline mode's
executor reuses its buffers. DALI's default host memory resource hands every allocation below
`DALI_MALLOC_POOL_THRESHOLD` to malloc, and that threshold defaults to 32 MiB, above any batch of
the CPU loop. On the calling thread those multi-megabyte buffers share glibc's main arena with the
interpreter's objects, which pin its top: freed buffers are not given back and the next batch's
do not fit the holes (75 MB in use held 780 MB of RSS; runs ended anywhere between 290 and 890
MB). Set to 1 MiB, allocations of 1 MiB and more come from DALI's pool (`pool_resource` over
malloc, a coalescing free tree), which keeps freed blocks for the next batch: the reuse pipeline
mode gets from its executor, with no page faults and no fragmentation of the main arena.

DALI reads the variable once, when it first allocates host memory, so it is set when the runtime
is imported, unless the user set it (then theirs is kept), and the probe at the end of the import
(:func:`settle`: a 4 MiB copy that malloc hands out and takes back, and the pool keeps) makes DALI
read it then. The variable is then taken out of the environment again: child processes (a
pipeline-mode run the user starts, a benchmark's reference) get DALI's defaults, not ours. A
pipeline that ran before the runtime was imported has already made DALI's host resource without
it: the probe finds the pool does not serve large buffers, and runtime/_alloc_thread.py's
fallback (large outputs allocated on a thread of their own) is used instead.
"""

import ctypes
import ctypes.util
import os

VARIABLE = "DALI_MALLOC_POOL_THRESHOLD"
THRESHOLD = "1M"
_PROBE_BYTES = 4 << 20

_pooled = None  # the probe's answer, once asked
_set_here = False  # whether configure() put the variable in the environment


def configure():
    """Ask DALI for its host pool above 1 MiB, unless the user chose a threshold."""
    global _set_here
    if VARIABLE not in os.environ:
        os.environ[VARIABLE] = THRESHOLD
        _set_here = True


def settle():
    """Have DALI read the variable now (the probe allocates), then leave the environment as it was."""
    global _set_here
    pooled()
    if _set_here:
        os.environ.pop(VARIABLE, None)
        _set_here = False


class _MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


def _malloc_in_use():
    """-> a function giving the bytes malloc has handed out and not had back, or None (not glibc,
    or a glibc older than 2.33 without mallinfo2)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallinfo2 = libc.mallinfo2
    except (OSError, AttributeError):
        return None
    mallinfo2.restype = _MallInfo2

    def in_use():
        m = mallinfo2()
        return m.uordblks + m.hblkhd
    return in_use


def _probe():
    in_use = _malloc_in_use()
    if in_use is None:
        return False  # cannot tell: the fallback stays on
    import numpy as np
    import nvidia.dali.backend_impl as _b

    half = np.zeros(_PROBE_BYTES // 2, np.uint8)
    samples = [_b.TensorCPU(half), _b.TensorCPU(half)]  # views of the array: nothing allocated
    before = in_use()
    joined = _b.TensorListCPU(samples)  # DALI copies the samples into one buffer of its own
    grew = in_use() - before
    del joined
    kept = in_use() - before
    # malloc: the buffer is handed out and given back. The pool: its block is kept when freed,
    # or it was already there (nothing handed out by malloc at all).
    return not (grew >= _PROBE_BYTES * 9 // 10 and kept < _PROBE_BYTES // 2)


def pooled():
    """Whether DALI's host resource serves buffers of 1 MiB and more from its pool (probed once)."""
    global _pooled
    if _pooled is None:
        try:
            _pooled = _probe()
        except Exception:  # a DALI without these classes: the fallback stays on
            _pooled = False
    return _pooled
