"""Where one small GPU call of the runtime goes: cProfile of `flip` on a GPU batch (8x8x3 uint8,
batch 1 and 32), after a warm-up, Python-level functions by own time. A profile, not a
comparison (`python -m benchmarks.run --only overhead` is).

    python -m benchmarks.profile_gpu_call [CALLS]      (on the GPU machine; default 3000)
"""

import cProfile
import io
import pstats
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402


def main(argv=None):
    import dali_migrate.runtime as ndd

    argv = sys.argv[1:] if argv is None else argv
    calls = int(argv[0]) if argv else 3000
    img = np.random.default_rng(0).integers(0, 255, (8, 8, 3), dtype=np.uint8)
    for bs in (1, 32):
        x = ndd.tensor(img, layout="HWC") if bs == 1 else ndd.batch([img] * bs, layout="HWC")
        x = x.gpu()
        for _ in range(200):
            ndd.flip(x, horizontal=1)
        t0 = time.perf_counter()
        for _ in range(calls):
            ndd.flip(x, horizontal=1)
        plain = (time.perf_counter() - t0) / calls * 1e6
        # where the rest goes: the call with its output kept (no free in the loop), the free
        # alone, and a stream sync per call (is the GPU work itself the bound?)
        kept = []
        t0 = time.perf_counter()
        for _ in range(calls):
            kept.append(ndd.flip(x, horizontal=1))
        keep = (time.perf_counter() - t0) / calls * 1e6
        t0 = time.perf_counter()
        kept.clear()
        free = (time.perf_counter() - t0) / calls * 1e6
        ctx = ndd.EvalContext.current()
        t0 = time.perf_counter()
        for _ in range(calls // 10):
            ndd.flip(x, horizontal=1)
            ctx.cuda_stream.synchronize()
        synced = (time.perf_counter() - t0) / (calls // 10) * 1e6
        print(f"## batch {bs}: outputs kept {keep:.1f} us per call; freeing them {free:.1f} us "
              f"each; with a stream sync per call {synced:.1f} us")
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(calls):
            ndd.flip(x, horizontal=1)
        pr.disable()
        s = io.StringIO()
        pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(18)
        print(f"## batch {bs}: {plain:.1f} us per call without the profiler")
        print(s.getvalue())


if __name__ == "__main__":
    main()
