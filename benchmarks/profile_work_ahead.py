"""Timeline of the calls worked ahead in the RN50 loop on the GPU: how long each call ahead took,
and the gap between one ending and the next starting (the decoder idling). A profile, not a
comparison: `python -m benchmarks.run` is.

    python -m benchmarks.profile_work_ahead BATCH full|decode   (on the GPU machine)

`full` runs the converted RN50 loop of benchmarks/bench_loop.py, `decode` the reader + decoder
alone, both on the GPU suite's 4,096 synthetic JPEGs.
"""

import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import bench_loop  # noqa: E402


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    bs, mode = int(argv[0]), argv[1]
    from dali_migrate.runtime import _ahead

    spans = []
    real = _ahead._work_ahead

    def timed(*args):
        t0 = time.perf_counter()
        try:
            return real(*args)
        finally:
            spans.append((t0, time.perf_counter()))

    _ahead._work_ahead = timed
    data = bench_loop.default_data(4096, 300, 500)
    if mode == "full":
        step = bench_loop.make_variant("ours", "gpu", data, bs, 8)
    else:  # the reader + decoder alone, as benchmarks/profile_gpu_decode.py runs it
        from benchmarks import profile_gpu_decode

        step = profile_gpu_decode._step("ours", bs, 8)
    for _ in range(5):
        step()
    spans.clear()
    n = 2 * 2048 // bs
    t0 = time.perf_counter()
    for _ in range(n):
        step()
    dt = time.perf_counter() - t0
    took = [b - a for a, b in spans]
    gaps = [spans[i + 1][0] - spans[i][1] for i in range(len(spans) - 1)]
    print(f"{mode} batch {bs}: {n * bs / dt:.0f} img/s, iteration {dt / n * 1e3:.2f} ms; "
          f"call ahead {statistics.median(took) * 1e3:.2f} ms; gap between calls ahead: median "
          f"{statistics.median(gaps) * 1e3:.2f} ms, mean {statistics.mean(gaps) * 1e3:.2f} ms "
          f"({len(spans)} calls)")


if __name__ == "__main__":
    main()
