"""Per-call overhead: dali_migrate.runtime.flip vs native ndd.flip (8x8x3 uint8, CPU).

    /work/venv/bin/python benchmarks/bench_overhead.py [--iters N]

Prints, for batch 1 (a Tensor) and batch 32 (a Batch): ours / native / ratio, in microseconds
per call (median of 5 repetitions).
"""

import argparse
import statistics
import time

import numpy as np


def _time(fn, iters):
    fn()
    fn()
    reps = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        reps.append((time.perf_counter() - t0) / iters * 1e6)
    return statistics.median(reps)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=500)
    args = ap.parse_args()

    import nvidia.dali.experimental.dynamic as native

    import dali_migrate.runtime as ours

    img = np.random.default_rng(0).integers(0, 255, (8, 8, 3), dtype=np.uint8)
    print(f"{'case':<12}{'ours us':>10}{'native us':>12}{'ratio':>8}")
    for bs in (1, 32):
        if bs == 1:
            xo = ours.tensor(img, layout="HWC")
            xn = native.tensor(img, layout="HWC")
        else:
            xo = ours.batch([img] * bs, layout="HWC")
            xn = native.batch([img] * bs, layout="HWC")

        def run_ours():
            ours.flip(xo, horizontal=1)

        def run_native():
            native.flip(xn, horizontal=1).evaluate()

        assert np.array_equal(np.asarray(ours.as_tensor(ours.flip(xo, horizontal=1))),
                              np.asarray(native.as_tensor(native.flip(xn, horizontal=1))))
        t_o = _time(run_ours, args.iters)
        t_n = _time(run_native, args.iters)
        print(f"{'batch ' + str(bs):<12}{t_o:>10.1f}{t_n:>12.1f}{t_o / t_n:>8.2f}")


if __name__ == "__main__":
    main()
