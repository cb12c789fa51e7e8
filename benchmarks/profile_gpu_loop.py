"""Where one RN50 iteration of the runtime goes on the GPU: each operator timed with a device
synchronisation after it (so each time is that stage's whole cost), then the same loop without
synchronisation for its throughput. A profile, not a comparison: `python -m benchmarks.run` is.

    python -m benchmarks.profile_gpu_loop [BATCH]      (on the GPU machine; default batch 256)

The loop is the converted RN50 body of benchmarks/bench_loop.py written out (file reader, GPU
decode, random_resized_crop, coin flip, crop_mirror_normalize) over the GPU suite's 4,096
synthetic JPEGs.
"""

import statistics
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import _common  # noqa: E402


def main(argv=None):
    import torch

    import dali_migrate.runtime as ndd
    from nvidia.dali import types

    argv = sys.argv[1:] if argv is None else argv
    bs = int(argv[0]) if argv else 256
    data = _common.make_jpegs(Path(tempfile.gettempdir()) / "dali_migrate_bench_jpegs_4096_300_500", 4096, 300, 500)
    ctx = ndd.EvalContext(num_threads=8, device_id=0)
    reader = ndd.readers.File(file_root=str(data), random_shuffle=True, seed=42)
    rng = ndd.random.RNG(seed=42)
    mean = [0.485 * 255, 0.456 * 255, 0.406 * 255]
    std = [0.229 * 255, 0.224 * 255, 0.225 * 255]

    def loop(n, timed):
        sync = torch.cuda.synchronize if timed else (lambda: None)
        parts = {"reader": [], "decode": [], "random_resized_crop": [], "coin_flip + cmn": [], "iteration": []}
        done = 0
        while done < n:
            t = time.perf_counter()
            for jpegs, labels in reader.next_epoch(batch_size=bs):
                t0 = time.perf_counter()
                with ctx:
                    images = ndd.decoders.image(jpegs, device="gpu")
                    sync()
                    t1 = time.perf_counter()
                    images = ndd.random_resized_crop(images, size=[224, 224], rng=rng)
                    sync()
                    t2 = time.perf_counter()
                    mirror = ndd.random.coin_flip(probability=0.5, batch_size=bs, rng=rng)
                    images = ndd.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                                       mean=mean, std=std, mirror=mirror)
                    sync()
                    t3 = time.perf_counter()
                for key, value in zip(parts, (t0 - t, t1 - t0, t2 - t1, t3 - t2, t3 - t)):
                    parts[key].append(value)
                done += 1
                if done >= n:
                    break
                t = time.perf_counter()
        return {k: 1000 * statistics.median(v) for k, v in parts.items()}

    loop(8, False)
    timed = loop(30, True)
    print(f"batch {bs}, each stage followed by a device sync (median ms):")
    for key, value in timed.items():
        print(f"  {key:22s} {value:7.2f}")
    t0 = time.perf_counter()
    loop(30, False)
    torch.cuda.synchronize()
    print(f"without syncs: {30 * bs / (time.perf_counter() - t0):.0f} images/s")


if __name__ == "__main__":
    main()
