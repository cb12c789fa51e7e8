"""Per-call overhead: dali_migrate.runtime.flip vs native ndd.flip (8x8x3 uint8).

    /work/venv/bin/python -m benchmarks.bench_overhead [--device cpu|gpu] [--iters N] [--reps R]

For batch 1 (a Tensor) and batch 32 (a Batch): microseconds per call for ours, native ndd eager
(`.evaluate()` after each call) and native ndd in `EvalMode.sync_cpu`; ratios ours / native.
Repetitions of the three are interleaved (a noisy neighbour hits all alike); medians reported.

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

        def run_ours():
            ours.flip(xo, horizontal=1).evaluate()

        def run_native():
            native.flip(xn, horizontal=1).evaluate()

        def run_native_sync():
            with native.EvalMode.sync_cpu:
                native.flip(xn, horizontal=1).evaluate()

        def host(x):
            return np.asarray(ours.as_tensor(x.cpu()) if hasattr(x, "batch_size") else x.cpu())

        a = ours.flip(xo, horizontal=1)
        b = native.flip(xn, horizontal=1)
        if bs == 1:
            assert np.array_equal(np.asarray(a.cpu()), np.asarray(b.cpu()))
        else:
            assert np.array_equal(np.asarray(ours.as_tensor(a.cpu())),
                                  np.asarray(native.as_tensor(b.cpu())))
        med, samples = _common.interleaved(
            {"ours": run_ours, "native_eager": run_native, "native_sync": run_native_sync},
            reps=reps, iters=iters)
        out[f"batch {bs}"] = {
            "ours_us": med["ours"], "native_eager_us": med["native_eager"],
            "native_sync_us": med["native_sync"],
            "ratio_eager": med["ours"] / med["native_eager"],
            "ratio_sync": med["ours"] / med["native_sync"],
            "samples_us": samples,
        }
    return out


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


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    ap.add_argument("--iters", type=int, default=300)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--alone", action="store_true", help="each variant in a process of its own")
    args = ap.parse_args(argv)
    if args.alone:
        res = measure_alone(args.device, iters=args.iters, reps=args.reps)
    else:
        res = measure(args.device, iters=args.iters, reps=args.reps)
    print(f"{'case':<10}{'ours us':>10}{'eager us':>10}{'sync us':>10}{'/eager':>8}{'/sync':>8}")
    for k, r in res.items():
        print(f"{k:<10}{r['ours_us']:>10.1f}{r['native_eager_us']:>10.1f}"
              f"{r['native_sync_us']:>10.1f}{r['ratio_eager']:>8.2f}{r['ratio_sync']:>8.2f}")


if __name__ == "__main__":
    main()
