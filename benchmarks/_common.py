"""Shared helpers for the benchmarks: machine description, timing, synthetic data, RSS."""

import os
import platform
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def python_reference_us() -> float:
    """Microseconds for ``sum(range(1000))``, best of 5: the VMs this project is measured on
    differ by 2x in plain Python speed from one session to the next (17.6 us on 2026-12-06,
    about 9 us on a typical desktop), which moves every absolute figure and, where one side
    waits on other threads and the other computes, the ratios too; this tells the runs apart."""
    import timeit

    return min(timeit.repeat("sum(range(1000))", number=2000, repeat=5)) / 2000 * 1e6


def machine():
    """CPU model, cores, GPU name(s), DALI / Python versions."""
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    info = {
        "cpu": cpu,
        "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "gpus": gpu_names(),
        "python_ref_us": python_reference_us(),
    }
    try:
        import nvidia.dali as dali

        info["dali"] = dali.__version__
    except ImportError:
        info["dali"] = None
    return info


def gpu_names():
    try:
        import nvidia.dali.backend_impl as b

        n = b.GetCUDADeviceCount()
    except Exception:
        return []
    if not n:
        return []
    try:
        import subprocess

        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        names = [x.strip() for x in out.stdout.splitlines() if x.strip()]
        if names:
            return names
    except Exception:
        pass
    return [f"cuda:{i}" for i in range(n)]


def have_gpu():
    return bool(gpu_names())


def interleaved(fns, reps, iters, warmup=2):
    """Time each of `fns` (name -> callable) `reps` times `iters` calls each, interleaving the
    functions rep by rep (so a noisy neighbour hits all of them alike); returns name -> median
    microseconds per call, and name -> all repetitions."""
    for f in fns.values():
        for _ in range(warmup):
            f()
    samples = {k: [] for k in fns}
    names = list(fns)
    for r in range(reps):
        order = names if r % 2 == 0 else names[::-1]
        for k in order:
            f = fns[k]
            t0 = time.perf_counter()
            for _ in range(iters):
                f()
            samples[k].append((time.perf_counter() - t0) / iters * 1e6)
    return {k: statistics.median(v) for k, v in samples.items()}, samples


def median_ci(values, level=0.95, resamples=4000, seed=0):
    """(low, high) percentile-bootstrap interval of the median of `values` (rounds' ratios).

    A loop's rounds on a shared machine scatter widely (0.7-1.3 around a median of 1.0), so a
    median alone cannot say whether a ">= 1.0" goal is met: the interval says how far this run's
    median can be trusted. The rounds of one process are not fully independent, so the interval
    is if anything too narrow. Fixed seed: the same rounds give the same interval."""
    import random

    vals = list(values)
    if len(vals) < 3:
        return None
    rng = random.Random(seed)
    meds = sorted(statistics.median(rng.choices(vals, k=len(vals))) for _ in range(resamples))
    tail = (1.0 - level) / 2
    return meds[int(tail * resamples)], meds[min(resamples - 1, int((1.0 - tail) * resamples))]


def verdict(ci, goal=1.0):
    """What a bootstrap interval says of a ">= goal" target."""
    if ci is None:
        return "too few rounds"
    lo, hi = ci
    if lo >= goal:
        return "met"
    if hi < goal:
        return "not met"
    return "not shown either way"


def _one_jpeg(args):
    import numpy as np
    from PIL import Image

    path, i, lo, hi, seed = args
    rng = np.random.default_rng([seed, i])
    h, w = (int(x) for x in rng.integers(lo, hi + 1, 2))
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    base = rng.uniform(0, 255, 3).astype(np.float32)
    img = np.stack([base[k] + 60 * np.sin(xx / rng.uniform(5, 40) + yy / rng.uniform(5, 40) + k)
                    for k in range(3)], axis=-1)
    img += rng.normal(0, 12, img.shape).astype(np.float32)
    Image.fromarray(np.clip(img, 0, 255).astype(np.uint8)).save(path, quality=90)


def make_jpegs(root, n, lo, hi, seed=0, classes=4, workers=None):
    """`n` synthetic JPEGs (sides in [lo, hi]) under root/class_k/, made with numpy + Pillow
    (deterministic per index; in parallel on all cores). Smooth gradients plus noise: compresses
    like a photo, decodes at a photo's cost. Reused when already made."""
    root = Path(root)
    stamp = root / f".made_{n}_{lo}_{hi}_{seed}"
    if stamp.exists():
        return root
    for c in range(classes):
        (root / f"class_{c}").mkdir(parents=True, exist_ok=True)
    jobs = [(root / f"class_{i % classes}" / f"img_{i:05d}.jpg", i, lo, hi, seed)
            for i in range(n)]
    workers = workers or len(os.sched_getaffinity(0))
    if workers > 1 and n >= 64:
        import multiprocessing as mp

        with mp.get_context("fork").Pool(workers) as pool:
            pool.map(_one_jpeg, jobs, chunksize=16)
    else:
        for j in jobs:
            _one_jpeg(j)
    stamp.touch()
    return root


def rss_bytes():
    """Current resident set size of this process."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def fmt_table(rows, headers):
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h))
              for i, h in enumerate(headers)]
    line = "  ".join(str(h).ljust(w) for h, w in zip(headers, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    for r in rows:
        out.append("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
    return "\n".join(out)
