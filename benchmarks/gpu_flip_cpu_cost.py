"""Is the GPU flip's per-call time the caller's CPU or the GPU's queue? (needs torch and a GPU)

    python -m benchmarks.gpu_flip_cpu_cost

For ours, native ndd eager and native ndd sync_cpu, at batch 1 and 32: the wall time per call in a
tight loop (what bench_overhead reports), the calling thread's CPU time in that loop, and the wall
time of 8 calls issued on an idle GPU (the device synchronized before each round, only the issuing
timed). Where the three agree, the time is the caller's, not a full launch queue. Measured on an
H200 (2026-11-29): ours at batch 32 147-149 us all three ways, DALI's flip launching a kernel
per sample (its operator run alone: 127-139 us, bench_overhead's "DALI alone").
"""
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _tight(f, sync, iters=400, reps=7):
    """(median wall us per call, median CPU us per call of this thread) in a tight loop."""
    for _ in range(50):
        f()
    sync()
    walls, cpus = [], []
    for _ in range(reps):
        c0, t0 = time.thread_time(), time.perf_counter()
        for _ in range(iters):
            f()
        walls.append((time.perf_counter() - t0) / iters * 1e6)
        cpus.append((time.thread_time() - c0) / iters * 1e6)
        sync()
    return sorted(walls)[reps // 2], sorted(cpus)[reps // 2]


def _drained(f, sync, k=8, rounds=200):
    """Median wall us per call of ``k`` calls issued on an idle GPU (only the issuing timed)."""
    for _ in range(20):
        f()
    out = []
    for _ in range(rounds):
        sync()
        t0 = time.perf_counter()
        for _ in range(k):
            f()
        out.append((time.perf_counter() - t0) / k * 1e6)
    sync()
    return sorted(out)[rounds // 2]


def main():
    import numpy as np
    import nvidia.dali.experimental.dynamic as native
    import torch

    import dali_migrate.runtime as ours
    from benchmarks.bench_overhead import flip_calls

    sync = torch.cuda.synchronize  # the whole device: DALI's streams too
    img = np.random.default_rng(0).integers(0, 255, (8, 8, 3), dtype=np.uint8)
    for bs in (1, 32):
        if bs == 1:
            xo, xn = ours.tensor(img, layout="HWC").gpu(), native.tensor(img, layout="HWC").gpu()
        else:
            xo, xn = ours.batch([img] * bs, layout="HWC").gpu(), native.batch([img] * bs, layout="HWC").gpu()
        run_ours, run_native, run_native_sync = flip_calls(ours, native, xo, xn)
        print(f"== batch {bs}")
        for name, f in (("ours", run_ours), ("native_eager", run_native), ("native_sync", run_native_sync)):
            wall, cpu = _tight(f, sync)
            print(f"  {name:14s} tight wall {wall:7.1f} us  tight cpu {cpu:7.1f} us  "
                  f"drained wall {_drained(f, sync):7.1f} us")


if __name__ == "__main__":
    main()
