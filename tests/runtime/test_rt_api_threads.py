"""ThreadPool, EvalContext(thread_pool=/num_threads=) and set_num_threads, as native ndd 2.4."""

import numpy as np
import pytest

pytest.importorskip("nvidia.dali")

import dali_migrate.runtime as ndd  # noqa: E402

IMG = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)


@pytest.fixture(autouse=True)
def _reset_threads():
    yield
    ndd.set_num_threads(None)


def test_thread_pool_basics():
    tp = ndd.ThreadPool(3)
    assert tp.num_threads == 3 and tp.device_id is None
    assert ndd.ThreadPool().num_threads == ndd.get_num_threads()
    assert ndd.ThreadPool(2, device_id=None).device_id is None
    with pytest.raises(TypeError):
        ndd.ThreadPool(2.5)
    with pytest.raises(ValueError):
        ndd.ThreadPool(-1)


def test_context_with_thread_pool():
    tp = ndd.ThreadPool(3)
    ctx = ndd.EvalContext(thread_pool=tp)
    assert ctx.thread_pool is tp and ctx.num_threads == 3
    with ctx:
        b = ndd.batch([IMG, IMG], layout="HWC")
        out = ndd.flip(b, horizontal=1)
    np.testing.assert_array_equal(np.asarray(out.select(1)), IMG[:, ::-1])
    ndd.set_num_threads(5)
    assert ctx.num_threads == 3 and ctx.thread_pool is tp  # its own pool: unaffected


def test_context_argument_errors():
    with pytest.raises(ValueError, match="cannot be specified together"):
        ndd.EvalContext(thread_pool=ndd.ThreadPool(2), num_threads=2)
    with pytest.raises(ValueError, match="Device ID clash"):
        ndd.EvalContext(device_id=0, thread_pool=ndd.ThreadPool(2, device_id=None))


def test_set_num_threads_affects_existing_contexts_without_their_own_count():
    ndd.set_num_threads(2)
    plain, own = ndd.EvalContext(), ndd.EvalContext(num_threads=5)
    assert (plain.num_threads, own.num_threads) == (2, 5)
    assert plain.thread_pool.num_threads == 2
    ndd.set_num_threads(3)  # native: contexts without num_threads= follow
    assert (plain.num_threads, own.num_threads) == (3, 5)
    assert plain.thread_pool.num_threads == 3
    assert ndd.EvalContext.default().num_threads == 3
    ndd.set_num_threads(None)
    assert plain.num_threads == ndd.get_num_threads()


def test_set_num_threads_errors():
    with pytest.raises(TypeError, match="must be an integer"):
        ndd.set_num_threads("a")
    with pytest.raises(ValueError, match="must be positive"):
        ndd.set_num_threads(0)
    with pytest.raises(ValueError, match="must not exceed 100"):
        ndd.set_num_threads(10**7)


def test_default_context_is_per_thread():
    import threading

    main = ndd.EvalContext.default()
    other = []
    th = threading.Thread(target=lambda: other.append(ndd.EvalContext.default()))
    th.start()
    th.join()
    assert other[0] is not main
    assert ndd.EvalContext.default() is main is ndd.EvalContext.current()
