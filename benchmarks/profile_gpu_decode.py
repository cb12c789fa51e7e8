"""The RN50 loop's bound on the GPU: the file reader + mixed decoder alone, in pipeline mode and
on the runtime (eager, and with the decode worked ahead), so the decoder's own per-batch cost can
be compared with the whole loop's. A profile, not a comparison: `python -m benchmarks.run` is.

    python -m benchmarks.profile_gpu_decode [BATCH ...]   (on the GPU machine; default 64 256)

Each variant runs in a process of its own, one after another; images/s of 3 rounds each.
"""

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import _common  # noqa: E402

DATA = Path(tempfile.gettempdir()) / "dali_migrate_bench_jpegs_4096_300_500"
VARIANTS = ("pipeline", "ours", "ours_eager", "native")


def _step(kind, bs, threads):
    import torch

    if kind == "pipeline":
        from nvidia.dali import fn, pipeline_def

        @pipeline_def(batch_size=bs, num_threads=threads, device_id=0, seed=42)
        def decode_pipe():
            jpegs, labels = fn.readers.file(file_root=str(DATA), random_shuffle=True)
            return fn.decoders.image(jpegs, device="mixed"), labels

        pipe = decode_pipe()
        pipe.build()
        return pipe.run
    if kind == "native":
        import nvidia.dali.experimental.dynamic as ndd
    else:
        import dali_migrate.runtime as ndd
        from dali_migrate.runtime import _readers

        _readers._READ_AHEAD = kind == "ours"
    ctx = ndd.EvalContext(num_threads=threads, device_id=0)
    reader = ndd.readers.File(file_root=str(DATA), random_shuffle=True, seed=42)

    def gen():
        while True:
            for jpegs, labels in reader.next_epoch(batch_size=bs):
                with ctx:
                    images = ndd.decoders.image(jpegs, device="gpu")
                    images.evaluate()
                yield images, labels

    g = gen()

    def step():
        out = next(g)
        torch.cuda.current_stream().synchronize()
        return out

    return step


def _one(kind, bs, threads, iters, rounds):
    step = _step(kind, bs, threads)
    for _ in range(3):
        step()
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(iters):
            step()
        out.append(iters * bs / (time.perf_counter() - t0))
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--one":
        kind, bs, threads = argv[1], int(argv[2]), int(argv[3])
        print(json.dumps(_one(kind, bs, threads, max(4, 2048 // bs), 3)))
        return
    _common.make_jpegs(DATA, 4096, 300, 500)
    for bs in [int(a) for a in argv] or [64, 256]:
        res = {}
        for kind in VARIANTS:
            p = subprocess.run([sys.executable, "-m", "benchmarks.profile_gpu_decode", "--one", kind,
                                str(bs), "8"], capture_output=True, text=True,
                               cwd=str(_common.REPO))
            if p.returncode:
                print(f"batch {bs} {kind}: failed: {p.stderr.strip().splitlines()[-1:]}")
                continue
            res[kind] = statistics.median(json.loads(p.stdout.strip().splitlines()[-1]))
        ref = res.get("pipeline")
        for kind, v in res.items():
            ratio = f"  {v / ref:.2f}x pipeline" if ref else ""
            print(f"reader + decode, batch {bs:>4} {kind:<11} {v:>9.0f} img/s{ratio}")


if __name__ == "__main__":
    main()
