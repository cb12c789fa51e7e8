"""Per-call overhead: dali_migrate.runtime.flip vs native ndd.flip (8x8x3 uint8).

    /work/venv/bin/python -m benchmarks.bench_overhead [--device cpu|gpu] [--iters N] [--reps R]

For batch 1 (a Tensor) and batch 32 (a Batch): microseconds per call for ours, native ndd eager
(`.evaluate()` after each call) and native ndd in `EvalMode.sync_cpu`; ratios ours / native.
Repetitions of the three are interleaved (a noisy neighbour hits all alike); medians reported.

Each call's time is DALI's operator run plus what the ndd layer around it costs. The run alone
is timed in the same interleaving (`dali_alone`: the backend operator instance and thread pool
that our call uses, fed the same input; `dali_alone_default`: a new instance of the operator on
the context's own pool of the default thread count, as native ndd's default context runs it).
`overhead_ratio_*` is (ours - dali_alone) / (native - dali_alone_default): the layer's own cost,
which is what the ndd layer can change. On the GPU at batch 32, DALI's flip launches a kernel per
sample, and those launches are most of every variant's time.

`--alone`: each variant in a process of its own, timed with nothing else running. Interleaved, the
other variants' DALI worker threads keep the CPUs awake between our calls; alone, each call also
pays for waking an idle core (on the 2-core VM: ours 113-130 us at batch 1 alone against ~20 us
interleaved). Both are real situations (a loop of many calls vs. one call now and then).
"""

import argparse
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from benchmarks import _common  # noqa: E402


def measure(device="cpu", batch_sizes=(1, 32), iters=300, reps=9):
    import nvidia.dali.experimental.dynamic as native

    import dali_migrate.runtime as ours

    img = np.random.default_rng(0).integers(0, 255, (8, 8, 3), dtype=np.uint8)
    out = {}
    for bs in batch_sizes:
        if bs == 1:
            xo = ours.tensor(img, layout="HWC")
            xn = native.tensor(img, layout="HWC")
        else:
            xo = ours.batch([img] * bs, layout="HWC")
            xn = native.batch([img] * bs, layout="HWC")
        if device == "gpu":
            xo, xn = xo.gpu(), xn.gpu()
        run_ours, run_native, run_native_sync = flip_calls(ours, native, xo, xn)

        def host(x):
            return np.asarray(ours.as_tensor(x.cpu()) if hasattr(x, "batch_size") else x.cpu())

        a = ours.flip(xo, horizontal=1)
        b = native.flip(xn, horizontal=1)
        if bs == 1:
            assert np.array_equal(np.asarray(a.cpu()), np.asarray(b.cpu()))
        else:
            assert np.array_equal(np.asarray(ours.as_tensor(a.cpu())),
                                  np.asarray(native.as_tensor(b.cpu())))
        alone, alone_default = _dali_alone(ours, xo)
        med, samples = _common.interleaved(
            {"ours": run_ours, "native_eager": run_native, "native_sync": run_native_sync,
             "dali_alone": alone, "dali_alone_default": alone_default},
            reps=reps, iters=iters)
        floor, floor_default = med["dali_alone"], med["dali_alone_default"]
        out[f"batch {bs}"] = {
            "ours_us": med["ours"], "native_eager_us": med["native_eager"],
            "native_sync_us": med["native_sync"],
            "ratio_eager": med["ours"] / med["native_eager"],
            "ratio_sync": med["ours"] / med["native_sync"],
            "dali_alone_us": floor, "dali_alone_default_us": floor_default,
            "overhead_ratio_eager": _overhead_ratio(med["ours"] - floor, med["native_eager"] - floor_default),
            "overhead_ratio_sync": _overhead_ratio(med["ours"] - floor, med["native_sync"] - floor_default),
            "samples_us": samples,
        }
    return out


def flip_calls(ours, native, xo, xn):
    """The three calls timed: (ours, native eager, native sync_cpu), each a flip evaluated."""
    def run_ours():
        ours.flip(xo, horizontal=1).evaluate()

    def run_native():
        native.flip(xn, horizontal=1).evaluate()

    def run_native_sync():
        with native.EvalMode.sync_cpu:
            native.flip(xn, horizontal=1).evaluate()

    return run_ours, run_native, run_native_sync


def _overhead_ratio(ours, native):
    # a layer cheaper than the scatter of the run it wraps can come out below zero: report 0 then
    return max(ours, 0.0) / native if native > 0 else float("nan")


def _dali_alone(ours, x):
    """Two callables running only DALI's flip operator on ``x``'s data, no ndd layer around it:
    (the backend operator instance, thread pool and stream that ``ours.flip(x)`` just used; a new
    instance of the same operator on the context's pool of the default thread count, as native
    ndd's default context runs it). Reaches into the runtime's operator cache: a benchmark's view."""
    from dali_migrate.runtime import _backend as be
    from dali_migrate.runtime import _ops
    from dali_migrate.runtime._batch import Batch

    ours.flip(x, horizontal=1)
    key, op = next(reversed(_ops._caches.ops.items()))
    schema, backend, dev_id, threads, max_bs = key[:5]
    assert schema == "Flip", key
    tl = x._tl if isinstance(x, Batch) else x._broadcast_tl(1)
    n = len(tl)
    ctx, ctx_threads, ctx_pool = _ops._context()
    small = _ops._small_pool() if threads == 1 and ctx_threads != 1 else None
    pool = small if small is not None else ctx_pool
    stream = ctx.cuda_stream
    meta = [("cpu" if type(tl) is be.TensorListCPU else "gpu", tl.ndim(), tl.dtype, tl.layout())]
    default_op = be.Operator(schema, backend, {"horizontal": 1}, meta, {}, max_bs, ctx_threads, dev_id)

    def alone():
        if small is not None and small.pin is not None:
            small.pin.follow()
        op.run(pool, [tl], {}, n, stream)

    def alone_default():
        default_op.run(ctx_pool, [tl], {}, n, stream)

    return alone, alone_default


def _alone_one(kind, device, bs, iters, reps):
    """Microseconds per call of one variant, in this process, nothing else timed here."""
    import time

    if kind == "ours":
        import dali_migrate.runtime as m
    else:
        import nvidia.dali.experimental.dynamic as m
    img = np.random.default_rng(0).integers(0, 255, (8, 8, 3), dtype=np.uint8)
    x = m.tensor(img, layout="HWC") if bs == 1 else m.batch([img] * bs, layout="HWC")
    if device == "gpu":
        x = x.gpu()

    def call():
        if kind == "native_sync":
            with m.EvalMode.sync_cpu:
                m.flip(x, horizontal=1).evaluate()
        else:
            m.flip(x, horizontal=1).evaluate()

    for _ in range(iters):
        call()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(iters):
            call()
        times.append((time.perf_counter() - t0) / iters * 1e6)
    return sorted(times)[len(times) // 2]


def measure_alone(device="cpu", batch_sizes=(1, 32), iters=300, reps=9, rounds=2):
    """Each variant in a process of its own, `rounds` processes each, in alternating order."""
    import json
    import subprocess

    out = {}
    for bs in batch_sizes:
        got = {"ours": [], "native_eager": [], "native_sync": []}
        for r in range(rounds):
            for kind in (list(got) if r % 2 == 0 else list(got)[::-1]):
                code = (f"import json; from benchmarks.bench_overhead import _alone_one; "
                        f"print(json.dumps(_alone_one({kind!r}, {device!r}, {bs}, {iters}, {reps})))")
                p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                   cwd=str(_common.REPO), check=True)
                got[kind].append(json.loads(p.stdout.strip().splitlines()[-1]))
        med = {k: sorted(v)[len(v) // 2] for k, v in got.items()}
        out[f"batch {bs}"] = {
            "ours_us": med["ours"], "native_eager_us": med["native_eager"],
            "native_sync_us": med["native_sync"],
            "ratio_eager": med["ours"] / med["native_eager"],
            "ratio_sync": med["ours"] / med["native_sync"],
            "samples_us": got,
        }
    return out


def _one_thread_always():
    # the rule before the sixteenth session: a small call stays on the one-thread pool unless
    # that pool's fastest probe run took longer than _SMALL_MAX_S
    from dali_migrate.runtime import _ops

    def decide(probe, dt):
        state, side = probe
        if side == _ops._ONE_THREAD and dt <= _ops._SMALL_MAX_S:
            _ops._small_state[state.key] = True

    _ops._probe_small = decide


def _context_pool_always():
    from dali_migrate.runtime import _ops

    _ops._SMALL_MAX_BATCH = 0  # no call counts as small


_SMALL_POOL_RULES = {"auto": lambda: None, "one-thread": _one_thread_always, "context": _context_pool_always}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    ap.add_argument("--iters", type=int, default=300)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--alone", action="store_true", help="each variant in a process of its own")
    ap.add_argument("--small-pool", default="auto", choices=list(_SMALL_POOL_RULES),
                    help="which pool the runtime's small CPU calls use: its own choice (auto, "
                         "the default), or forced, to compare the choices side by side")
    args = ap.parse_args(argv)
    _SMALL_POOL_RULES[args.small_pool]()
    if args.alone:
        res = measure_alone(args.device, iters=args.iters, reps=args.reps)
    else:
        res = measure(args.device, iters=args.iters, reps=args.reps)
    print(f"{'case':<10}{'ours us':>10}{'eager us':>10}{'sync us':>10}{'/eager':>8}{'/sync':>8}"
          f"{'DALI alone us':>15}{'layer /eager':>14}{'layer /sync':>13}")
    for k, r in res.items():
        print(f"{k:<10}{r['ours_us']:>10.1f}{r['native_eager_us']:>10.1f}"
              f"{r['native_sync_us']:>10.1f}{r['ratio_eager']:>8.2f}{r['ratio_sync']:>8.2f}"
              + (f"{r['dali_alone_us']:>8.1f} /{r['dali_alone_default_us']:>5.1f}"
                 f"{r['overhead_ratio_eager']:>14.2f}{r['overhead_ratio_sync']:>13.2f}"
                 if "dali_alone_us" in r else ""))


if __name__ == "__main__":
    main()
