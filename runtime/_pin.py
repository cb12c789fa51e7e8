"""Keep a small-call pool's worker thread on its caller's core.

A small CPU call (runtime/_ops.py: a deterministic operator on a few tiny samples) runs on a
one-thread pool, and its caller blocks until the worker is done. DALI's pools run their work only
on their own threads, so every call wakes the worker and then the caller again. When the worker
sleeps on another core, each wake-up is a cross-core interrupt, and on a virtual machine an idle
vCPU has to be woken by the hypervisor first: measured on the 2-core CI VM, a flip of one 8x8x3
sample took ~100 us alone in its process, of which ~80 us were these two hand-overs. With the
worker allowed only on the core the caller runs on, the blocked caller hands its core to the worker
and gets it back: ~20-35 us. Results cannot change (the same operator runs on the same thread;
only where the scheduler may place that thread changes), and the worker is the runtime's own, made
for this caller thread alone.

The caller may move to another core between calls; the worker follows on the next call (one
`sched_getcpu` per call, an affinity change only when the core changed). Linux only; anything
unexpected (no /proc, no `sched_getcpu`, a core the worker may not use) turns it off for that
pool. `DALI_MIGRATE_PIN_SMALL_CALLS=0` turns it off everywhere.
"""

import ctypes
import os
import threading
import time

ENABLED = os.environ.get("DALI_MIGRATE_PIN_SMALL_CALLS", "1") != "0"

_lock = threading.Lock()
_getcpu = None


def _sched_getcpu():
    global _getcpu
    if _getcpu is None:
        try:
            fn = ctypes.CDLL(None, use_errno=True).sched_getcpu
            fn.restype, fn.argtypes = ctypes.c_int, []
            _getcpu = fn
        except (OSError, AttributeError):
            _getcpu = False
    return _getcpu or None


def _threads() -> set:
    try:
        return set(os.listdir("/proc/self/task"))
    except OSError:
        return set()


def _name(tid: str) -> str:
    try:
        with open(f"/proc/self/task/{tid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


class Pin:
    """The worker thread of one pool, and the core it was last allowed on."""

    __slots__ = ("tid", "cpu", "getcpu")

    def __init__(self, tid: int, getcpu):
        self.tid, self.cpu, self.getcpu = tid, -1, getcpu

    def follow(self) -> None:
        """Allow the worker only on the core this (calling) thread runs on now."""
        cpu = self.getcpu()
        if cpu == self.cpu or self.tid is None:
            return
        if cpu < 0:
            self.tid = None
            return
        try:
            os.sched_setaffinity(self.tid, {cpu})
            self.cpu = cpu
        except OSError:  # a core outside the worker's cpuset, the thread gone: leave it be
            self.tid = None


def make_pinned(make):
    """(``make()``, a Pin for the one thread it started, or None).

    The worker is told from the process's threads before and after ``make()``: exactly one new
    thread, named by DALI ("[DALI]..."). Other threads of the process may start at the same time;
    then nothing is pinned rather than some other thread."""
    getcpu = _sched_getcpu() if ENABLED else None
    if getcpu is None:
        return make(), None
    with _lock:
        before = _threads()
        made = make()
        new = _threads() - before if before else set()
    if len(new) != 1:
        return made, None
    (tid,) = new
    # (the thread names itself once it runs, which may be a moment after it starts)
    for _ in range(20):
        if _name(tid).startswith("[DALI]"):
            return made, Pin(int(tid), getcpu)
        time.sleep(0.0005)
    return made, None
