"""Per-call overhead: dali_migrate.runtime.flip vs native ndd.flip (8x8x3 uint8).

    /work/venv/bin/python -m benchmarks.bench_overhead [--device cpu|gpu] [--iters N] [--reps R]

For batch 1 (a Tensor) and batch 32 (a Batch): microseconds per call for ours, native ndd eager
(`.evaluate()` after each call) and native ndd in `EvalMode.sync_cpu`; ratios ours / native.
Repetitions of the three are interleaved (a noisy neighbour hits all alike); medians reported.
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


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    ap.add_argument("--iters", type=int, default=300)
    ap.add_argument("--reps", type=int, default=9)
    args = ap.parse_args(argv)
    res = measure(args.device, iters=args.iters, reps=args.reps)
    print(f"{'case':<10}{'ours us':>10}{'eager us':>10}{'sync us':>10}{'/eager':>8}{'/sync':>8}")
    for k, r in res.items():
        print(f"{k:<10}{r['ours_us']:>10.1f}{r['native_eager_us']:>10.1f}"
              f"{r['native_sync_us']:>10.1f}{r['ratio_eager']:>8.2f}{r['ratio_sync']:>8.2f}")


if __name__ == "__main__":
    main()
