"""Working ahead of the caller, as a pipeline's prefetching does, without changing any result.

A converted loop reads a batch, then calls operators on it. Pipeline mode runs the next batch's
reader and decoder while the current one is being used; eager calls cannot, since nothing is
known of batch i+1 before the caller asks. Two things are known, though:

- a CPU reader's next batches: the reader reads two of them on the work-ahead thread while the
  caller works on the current one (`runtime/_readers.py`);
- what the caller did with the current batch: a call of a *deterministic, stateless* operator
  whose inputs are all outputs of one reader's current batch (``decoders.image(jpegs)``). The
  same call on the batches being read ahead gives the same bytes whenever it runs, so it runs on
  the work-ahead thread too, one batch after the other, and when the caller makes that call on
  such a batch the result is handed over instead of computed again.

Kept as eager calls are: random operators (their state would advance early), stateful ones,
operators with side effects (no-prune), calls with tensor arguments, calls on anything but the
reader's own outputs. A call made ahead that failed is forgotten: the caller's own call then
runs eagerly and raises where it always did. The call ahead runs on the caller's own operator
instance (a second instance of a GPU decoder cost ~270 MB of host and of device memory on the
H100), never at the same time as the caller (`settle`: a backend operator instance is not safe to
run from two threads), with a thread pool of its own; GPU work runs on a stream of its own, and
the caller's stream waits for it when the result is handed over (`_set_stream`: DALI records an
event and makes the caller's stream wait, and the buffers are then freed in the caller's stream
order).

Only calls of GPU (and mixed) operators are worked ahead: they overlap the caller's GPU work and
the decoder's hardware, as a pipeline's stages do. A CPU operator worked ahead competes for the
cores the caller's own CPU operators keep busy (2-core VM, CPU decoder ahead: the caller's
random_resized_crop took twice as long, and the loop was slower than eager); CPU_OPERATORS turns
it on for them too (the tests use it to exercise the mechanism without a GPU).

``DALI_MIGRATE_READ_AHEAD=0`` turns all of it off (eager reads and calls).
"""

import concurrent.futures
import os

from . import _alloc_thread
from . import _backend as _be

ENABLED = os.environ.get("DALI_MIGRATE_READ_AHEAD", "1") != "0"
CPU_OPERATORS = False


# id(TensorList) -> (reader, output index, TensorList) for the batch each reader yielded last
_tracked = {}


def executor(kind):
    """One thread for all reads ahead ("read": they stay in submission order) and one for all
    calls worked ahead ("work": a call waits for its batch's read, and does not hold up the next
    read, which would put a read on the critical path of every iteration)."""
    return _alloc_thread.runtime_thread(f"{kind}-ahead")


def _forget_after_fork():
    _tracked.clear()  # (the threads are forgotten by _alloc_thread)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


def track(reader, tls):
    """`tls` are the outputs of the batch `reader` is handing to its caller (the previous
    batch's are no longer worked on)."""
    for i in reader._tracked_ids:
        e = _tracked.get(i)
        if e is not None and e[0] is reader:
            del _tracked[i]
    ids = []
    for j, tl in enumerate(tls):
        _tracked[id(tl)] = (reader, j, tl)
        ids.append(id(tl))
    reader._tracked_ids = ids


def untrack(reader, tls):
    """An iterator of `reader` that handed out `tls` last has ended."""
    for tl in tls:
        e = _tracked.get(id(tl))
        if e is not None and e[2] is tl:
            del _tracked[id(tl)]


def eligible(d):
    r = d._ahead_ok
    if r is None:
        if _be.use_pipeline():
            # the one-op Pipeline fallback (DALI 1.53 without a CUDA driver): a pipeline that
            # raised is unusable afterwards, so a call that failed ahead would change the error
            # the caller's call raises; and there are no GPU operators to overlap there
            d._ahead_ok = False
            return False
        s = d.schema
        no_prune = s.IsNoPrune() if hasattr(s, "IsNoPrune") else True
        r = d._ahead_ok = not (d.random_state or d.random_seed or d.stateful or no_prune)
    return r


def settle(op):
    """Wait until no call worked ahead is running on `op` (an instance serves one thread at a time)."""
    f = op._ahead_future
    if f is not None:
        concurrent.futures.wait([f])
        op._ahead_future = None


def take(key, in_tls, ctx_stream, backend, op):
    """(outputs of this call computed ahead or None, a ticket for `start` or None). `key`
    identifies the call (operator, arguments, input metadata)."""
    if backend == "cpu" and not CPU_OPERATORS:
        return None, None
    reader = None
    idx = []
    for tl in in_tls:
        e = _tracked.get(id(tl))
        if e is None or e[2] is not tl or (reader is not None and e[0] is not reader):
            return None, None
        reader = e[0]
        idx.append(e[1])
    if reader is None:
        return None, None
    wkey = (key, tuple(idx))
    outs = None
    futs = reader._work.get(wkey)
    fut = futs.pop(reader._current_read, None) if futs else None
    if fut is not None:
        try:
            ins, res = fut.result()
        except Exception:  # noqa: BLE001 - the eager call raises it where it belongs
            ins = res = None
        if res is not None and len(ins) == len(in_tls) and all(a is b for a, b in zip(ins, in_tls)):
            if backend != "cpu":
                target = op.stream_for(ctx_stream)  # the stream the caller's own call ran on
                for o in res:
                    o._set_stream(target)
            outs = res
    return outs, (reader, wkey, tuple(idx))


def start(ticket, op, ctx_stream, backend, num_threads, batch_size):
    """After the caller's call (taken or made): the same call on each batch being read ahead, on
    the caller's operator instance, which the caller does not run meanwhile (`settle`). The calls
    run one after another on the work-ahead thread, so the next starts as soon as one ends."""
    reader, wkey, idx = ticket
    reads = reader._ahead
    futs = reader._work.setdefault(wkey, {})
    for rf in [rf for rf in futs if rf not in reads]:
        del futs[rf]  # batches the caller has gone past without this call
    if not reads:
        return
    stream = ctx_stream if backend == "cpu" else None
    for rf in list(reads):
        if rf not in futs:
            futs[rf] = op._ahead_future = executor("work").submit(
                _work_ahead, reader, rf, idx, stream, backend, num_threads, batch_size, op)


def _work_ahead(reader, read, idx, stream, backend, num_threads, batch_size, op):
    """On the work-ahead thread: the call on the batch read ahead. -> (inputs, outputs)."""
    outs = read.result()
    if outs is None:
        return (), None  # not read ahead after all (the epoch's end)
    ins = tuple(outs[j] for j in idx)
    if len(ins[0]) != batch_size:
        return ins, None  # the epoch's last, shorter batch: a call of another size
    pools = reader._work_pools
    pkey = (num_threads, None if backend == "cpu" else op._gpu_id)
    pool = pools.get(pkey)
    if pool is None:
        pool = pools[pkey] = _be.ThreadPool(num_threads, pkey[1])
    if backend == "cpu":
        return ins, op.run(pool, list(ins), {}, batch_size, stream)
    dev = op._gpu_id
    s = reader._work_streams.get(dev)
    if s is None:
        with _be.device_guard(dev):
            s = reader._work_streams[dev] = _be._b.Stream(dev)
    res = op.run(pool, list(ins), {}, batch_size, s)
    # complete before it is handed over: the inputs may be freed in the caller's stream order
    # once the caller has the result
    _be._b.CUDAStreamSynchronize(s)
    return ins, res
