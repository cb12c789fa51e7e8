"""Soak test: a converted training-style loop for many iterations, watching memory.

    python benchmarks/soak.py                       # 10,000 iterations, CPU
    python benchmarks/soak.py --iterations 2000 --device gpu --json soak.json

The loop is pipeline-mode source (file reader over a synthetic image set, decode, resize,
crop_mirror_normalize with a random mirror) converted by the codemod and run on
dali_migrate.runtime (`--ndd native` runs it on DALI's own dynamic mode instead). Every
`--every` iterations (default 500) it samples the host RSS (and, with a GPU, the device memory in
use, from nvidia-smi). It prints a table, writes JSON, and decides "flat": after warm-up (the first
sample), the RSS growth over the last quarter of the run is below `--tolerance` (2%) of the median
RSS. Exit status 0 when flat, 1 when not.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, have_gpu, machine, make_jpegs, rss_bytes  # noqa: E402

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

SOURCE = '''\
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import pipeline_def


@pipeline_def(batch_size=8, num_threads=2, device_id=0, seed=42)
def soak_pipe(root, size=32, crop=24):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed")
    images = fn.resize(images, resize_x=size, resize_y=size)
    mirror = fn.random.coin_flip(probability=0.5)
    images = fn.crop_mirror_normalize(
        images, dtype=types.FLOAT, output_layout="CHW", crop=(crop, crop),
        mean=[120.0, 115.0, 100.0], std=[60.0, 60.0, 60.0], mirror=mirror,
    )
    return images, labels
'''


def gpu_memory_mib():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=10)
        return sum(int(x) for x in out.stdout.split()) if out.returncode == 0 else None
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


def consume(*batches) -> None:
    """What a training step does to the outputs: make them real. Native ndd is lazy: results
    nobody evaluates pile up (about 80 KB an iteration here, see docs/reliability.md)."""
    for b in batches:
        if hasattr(b, "evaluate"):
            b.evaluate()
        else:
            b.select(0)


def load_converted(ndd_module: str, device: str, tmp: Path):
    from dali_migrate.config import Config
    from dali_migrate.device_cpu import to_cpu
    from dali_migrate.engine import convert_source

    result = convert_source(SOURCE, config=Config(ndd_module=ndd_module))
    if result.markers:
        raise SystemExit(f"the soak pipeline was not converted: {result.markers}")
    text = result.output if device == "gpu" else to_cpu(result.output)
    path = tmp / "soak_converted.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("soak_converted", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def decide(samples: list, tolerance: float) -> dict:
    """Flat: over the last quarter of the run, RSS grew by less than `tolerance` of the median."""
    rss = [s["rss_mib"] for s in samples[1:]] or [s["rss_mib"] for s in samples]  # skip warm-up
    median = statistics.median(rss)
    q = max(1, len(rss) // 4)
    last_quarter = rss[-q - 1:] if len(rss) > q else rss
    growth = last_quarter[-1] - last_quarter[0]
    total = rss[-1] - rss[0]
    return {
        "median_rss_mib": round(median, 1),
        "last_quarter_growth_mib": round(growth, 2),
        "last_quarter_growth_pct": round(100 * growth / median, 3),
        "growth_after_warmup_mib": round(total, 2),
        "tolerance_pct": 100 * tolerance,
        "flat": growth < tolerance * median,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=10_000)
    ap.add_argument("--every", type=int, default=500, help="sample memory every N iterations")
    ap.add_argument("--images", type=int, default=64, help="synthetic JPEGs in the data set")
    ap.add_argument("--size", type=int, nargs=2, default=(40, 80), metavar=("MIN", "MAX"),
                    help="side lengths of the synthetic JPEGs")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--device", choices=["cpu", "gpu", "auto"], default="auto")
    ap.add_argument("--ndd", choices=["runtime", "native"], default="runtime",
                    help="run on dali_migrate.runtime or DALI's own dynamic mode")
    ap.add_argument("--no-consume", dest="consume", action="store_false",
                    help="drop the outputs without evaluating them (native ndd then grows)")
    ap.add_argument("--tolerance", type=float, default=0.02)
    ap.add_argument("--json", type=Path, default=Path("soak.json"))
    ap.add_argument("--data", type=Path, help="use this image folder instead of a synthetic one")
    args = ap.parse_args(argv)

    device = ("gpu" if have_gpu() else "cpu") if args.device == "auto" else args.device
    ndd_module = "dali_migrate.runtime" if args.ndd == "runtime" else "nvidia.dali.experimental.dynamic"
    with tempfile.TemporaryDirectory(prefix="dali-migrate-soak-") as tmp:
        tmp = Path(tmp)
        root = args.data
        if root is None:
            root = tmp / "images"
            make_jpegs(root, args.images, args.size[0], args.size[1])
        mod = load_converted(ndd_module, device, tmp)
        gen = mod.soak_pipe(str(root), batch_size=args.batch_size,
                            device_id=0 if device == "gpu" else None)
        samples = []
        t0 = time.perf_counter()
        header = f"{'iteration':>10} {'seconds':>9} {'rss MiB':>9}" + (f" {'gpu MiB':>9}" if device == "gpu" else "")
        print(header)
        print("-" * len(header))
        for i in range(1, args.iterations + 1):
            images, labels = next(gen)
            if args.consume:
                consume(images, labels)
            if i == 1 or i % args.every == 0 or i == args.iterations:
                if device == "gpu":
                    images.cpu()  # synchronise before measuring
                s = {"iteration": i, "seconds": round(time.perf_counter() - t0, 2),
                     "rss_mib": round(rss_bytes() / 2**20, 2)}
                if device == "gpu":
                    s["gpu_mib"] = gpu_memory_mib()
                samples.append(s)
                row = f"{i:>10} {s['seconds']:>9} {s['rss_mib']:>9}"
                print(row + (f" {s['gpu_mib']!s:>9}" if device == "gpu" else ""), flush=True)
        elapsed = time.perf_counter() - t0
    verdict = decide(samples, args.tolerance)
    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "machine": machine(),
        "device": device,
        "ndd": ndd_module,
        "iterations": args.iterations,
        "batch_size": args.batch_size,
        "consume": args.consume,
        "images": args.images,
        "seconds": round(elapsed, 1),
        "iterations_per_second": round(args.iterations / elapsed, 1),
        "samples": samples,
        "verdict": verdict,
    }
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\n{args.iterations} iterations in {elapsed:.1f} s ({result['iterations_per_second']} it/s)")
    print(f"median RSS {verdict['median_rss_mib']} MiB; last-quarter growth "
          f"{verdict['last_quarter_growth_mib']} MiB ({verdict['last_quarter_growth_pct']}%); "
          f"after warm-up {verdict['growth_after_warmup_mib']} MiB")
    print("FLAT" if verdict["flat"] else "NOT FLAT", f"(tolerance {verdict['tolerance_pct']}% of the median)")
    print(f"JSON: {args.json}")
    return 0 if verdict["flat"] else 1


if __name__ == "__main__":
    sys.exit(main())
