"""CPU operator calls with large outputs run on the allocation thread (runtime/_alloc_thread.py)
where DALI's host pool does not serve them: same results, same errors at the same call, small
calls where they are called. The thread is switched on here, whatever the probe of
runtime/_host_pool.py found (tests/runtime/test_rt_host_pool.py covers that choice)."""

import threading

import numpy as np
import pytest

from dali_migrate.runtime import _alloc_thread

ndd = pytest.importorskip("dali_migrate.runtime")


class _FakeTL:
    def __init__(self, nbytes):
        self._shape = [(nbytes,)]

    def shape(self):
        return self._shape

    @property
    def dtype(self):
        from nvidia.dali.types import DALIDataType

        return DALIDataType.UINT8


@pytest.fixture(autouse=True)
def _thread_on(monkeypatch):
    monkeypatch.setattr(_alloc_thread, "_ENABLED", True)


def _recording(nbytes, threads):
    def fn():
        threads.append(threading.current_thread().name)
        return (_FakeTL(nbytes),)

    return fn


def test_large_outputs_move_to_the_allocation_thread_after_the_first_call():
    threads = []
    p = _alloc_thread.Placement()
    fn = _recording(_alloc_thread.LARGE_BYTES, threads)
    for _ in range(3):
        p.run(fn)
    me = threading.current_thread().name
    assert threads[0] == me  # measured where it was called
    assert all(t.startswith("dali-migrate-alloc") for t in threads[1:])


def test_small_outputs_stay_on_the_callers_thread():
    threads = []
    p = _alloc_thread.Placement()
    fn = _recording(_alloc_thread.LARGE_BYTES - 1, threads)
    for _ in range(5):
        p.run(fn)
    assert set(threads) == {threading.current_thread().name}


def test_a_call_that_grows_is_moved_at_the_next_recheck(monkeypatch):
    monkeypatch.setattr(_alloc_thread, "_RECHECK", 4)
    threads, sizes = [], iter([10] * 3 + [_alloc_thread.LARGE_BYTES] * 5)

    def fn():
        threads.append(threading.current_thread().name)
        return (_FakeTL(next(sizes)),)

    p = _alloc_thread.Placement()
    for _ in range(6):
        p.run(fn)
    me = threading.current_thread().name
    # the 2nd and 3rd calls are not measured; the 4th is, and is large
    assert threads[:4] == [me] * 4
    assert all(t.startswith("dali-migrate-alloc") for t in threads[4:])


def test_errors_surface_at_the_call_that_failed():
    p = _alloc_thread.Placement()
    p.large = True

    def fn():
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        p.run(fn)


def test_switched_off(monkeypatch):
    monkeypatch.setattr(_alloc_thread, "_ENABLED", False)
    threads = []
    p = _alloc_thread.Placement()
    p.large = True
    p.run(_recording(_alloc_thread.LARGE_BYTES, threads))
    assert threads == [threading.current_thread().name]


def test_real_operator_results_are_the_same_on_either_thread(monkeypatch):
    rng = np.random.default_rng(3)
    imgs = [rng.integers(0, 255, (300 + i, 400, 3), dtype=np.uint8) for i in range(8)]
    b = ndd.batch(imgs, layout="HWC")  # 2.9 MB of outputs: large
    outs = [np.asarray(t) for t in ndd.flip(b, horizontal=1)]
    again = [np.asarray(t) for t in ndd.flip(b, horizontal=1)]  # on the allocation thread
    monkeypatch.setattr(_alloc_thread, "_ENABLED", False)
    inline = [np.asarray(t) for t in ndd.flip(b, horizontal=1)]
    for x, y, z, img in zip(outs, again, inline, imgs):
        np.testing.assert_array_equal(x, img[:, ::-1])
        np.testing.assert_array_equal(y, x)
        np.testing.assert_array_equal(z, x)


def test_a_real_operator_error_is_raised_by_the_call():
    rng = np.random.default_rng(4)

    def images(side):
        return ndd.batch([rng.integers(0, 255, (side, side, 3), dtype=np.uint8)
                          for _ in range(4)], layout="HWC")

    big = images(512)
    for _ in range(2):  # 1.9 MB of outputs: the second call runs on the allocation thread
        out = ndd.crop(big, crop=(400, 400), out_of_bounds_policy="error")
    assert out.shape == [(400, 400, 3)] * 4
    # the same operator instance, a window outside the images: DALI raises when it runs
    with pytest.raises(RuntimeError, match="out of bounds|outside"):
        ndd.crop(images(300), crop=(400, 400), out_of_bounds_policy="error")
    # and the instance works on afterwards (DALI 1.53's one-operator Pipeline is built anew)
    out = ndd.crop(big, crop=(400, 400), out_of_bounds_policy="error")
    assert out.shape == [(400, 400, 3)] * 4
