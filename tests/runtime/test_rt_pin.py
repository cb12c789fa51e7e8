"""Small CPU calls: their one-thread pool's worker is kept on the caller's core (runtime/_pin.py),
and that changes where it runs, never what it computes."""

import os
import sys
import threading

import numpy as np
import pytest

pytest.importorskip("nvidia.dali")

import dali_migrate.runtime as ndd  # noqa: E402
from dali_migrate.runtime import _backend, _ops, _pin  # noqa: E402

linux = pytest.mark.skipif(not sys.platform.startswith("linux") or not os.path.isdir("/proc/self/task"),
                           reason="thread affinity is read from /proc (Linux)")
small_path = pytest.mark.skipif(_backend.use_pipeline(),
                                reason="operators run through the Pipeline fallback here: no small-call pool")


@pytest.fixture(autouse=True)
def _reset_threads():
    yield
    ndd.set_num_threads(None)


def _small_call_in_new_thread(samples):
    """Run a small flip on a fresh thread (so it makes its own small pool); its result and pool."""
    got = {}

    def work():
        ndd.set_num_threads(2)  # (small calls are taken off a pool of more than one thread)
        got["out"] = ndd.flip(ndd.batch(samples, layout="HWC"), horizontal=1)
        got["pool"] = _ops._small_tls.pool
        got["cpu"] = _pin._sched_getcpu()() if _pin._sched_getcpu() else None

    t = threading.Thread(target=work)
    t.start()
    t.join()
    return got


@linux
@small_path
def test_worker_is_allowed_only_on_the_callers_core():
    if not _pin.ENABLED:
        pytest.skip("DALI_MIGRATE_PIN_SMALL_CALLS=0")
    samples = [np.arange(8 * 8 * 3, dtype=np.uint8).reshape(8, 8, 3) + i for i in range(3)]
    got = _small_call_in_new_thread(samples)
    pool = got["pool"]
    assert pool is not None and pool.pin is not None
    assert os.sched_getaffinity(pool.pin.tid) == {pool.pin.cpu}
    assert pool.pin.cpu in os.sched_getaffinity(0)
    for i, s in enumerate(samples):
        np.testing.assert_array_equal(np.asarray(got["out"].select(i)), s[:, ::-1])


@linux
@small_path
def test_worker_follows_the_caller_to_another_core():
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2 or not _pin.ENABLED:
        pytest.skip("needs two usable cores")
    seen = []

    def work():
        ndd.set_num_threads(2)
        x = ndd.batch([np.zeros((4, 4, 3), np.uint8)] * 2, layout="HWC")
        for cpu in cpus[:2]:
            os.sched_setaffinity(0, {cpu})  # (this thread only)
            ndd.flip(x, horizontal=1)
            pin = _ops._small_tls.pool.pin
            seen.append((cpu, os.sched_getaffinity(pin.tid)))

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert seen == [(cpus[0], {cpus[0]}), (cpus[1], {cpus[1]})]


def test_nothing_pinned_when_another_thread_starts_too():
    started = threading.Event()

    def make():
        t = threading.Thread(target=started.wait)  # a thread of someone else's, at the same moment
        t.start()
        make.thread = t
        return _pin._threads  # (any object: what make() returns is handed back)

    made, pin = _pin.make_pinned(make)
    started.set()
    make.thread.join()
    assert made is _pin._threads and pin is None


def test_a_core_the_worker_cannot_use_turns_pinning_off():
    pin = _pin.Pin(tid=2 ** 22 + 12345, getcpu=lambda: 0)  # (no such thread)
    pin.follow()
    assert pin.tid is None
    pin.follow()  # and it stays off, without error


def test_switch_off(monkeypatch):
    monkeypatch.setattr(_pin, "ENABLED", False)
    made, pin = _pin.make_pinned(lambda: "pool")
    assert made == "pool" and pin is None
