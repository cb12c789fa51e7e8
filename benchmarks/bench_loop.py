"""Training-loop throughput and host memory: pipeline mode vs converted code.

The loop is the usual image-classification input: file reader (shuffled), decode,
random_resized_crop, crop_mirror_normalize with a random mirror. The pipeline-mode source below
is converted with the codemod (`engine.convert_source`) and the converted generator is run:
- on our runtime (`dali_migrate.runtime`, through `installed_runtime()`, i.e. unchanged code),
- on native ndd (eager), and on native ndd with `capture=True` (DALI 2.2+, GPU suite),
against the original pipeline (`pipe.run()`, prefetching, async executor).

    python -m benchmarks.bench_loop [--device cpu|gpu] [--batch 32] [--images 512] ...
    python -m benchmarks.bench_loop --rss ours|pipeline --iters 2000   (memory, one variant)
    python -m benchmarks.bench_loop --kinds pipeline,ours,ours_thread,ours_inline
        ours: as the runtime comes (large host buffers from DALI's pool, runtime/_host_pool.py);
        ours_thread: without the pool (DALI's default threshold), large outputs allocated on the
        runtime's allocation thread (runtime/_alloc_thread.py), the sixth session's way;
        ours_inline: without either, every buffer malloc'd on the caller's thread
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import _common  # noqa: E402

PIPELINE_SRC = '''
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import pipeline_def


@pipeline_def(batch_size=32, num_threads=2, device_id=None, seed=42)
def train_pipe(data_root, crop=224):
    jpegs, labels = fn.readers.file(file_root=data_root, random_shuffle=True, name="Reader")
    images = fn.decoders.image(jpegs, device="{decode}")
    images = fn.random_resized_crop(images, size=[crop, crop])
    mirror = fn.random.coin_flip(probability=0.5)
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                      mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                      std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
                                      mirror=mirror)
    return images, labels
'''


def pipeline_source(device):
    return PIPELINE_SRC.replace("{decode}", "mixed" if device == "gpu" else "cpu")


def converted_source(device):
    from dali_migrate.engine import convert_source

    res = convert_source(pipeline_source(device))
    assert "def train_pipe" in res.output and "pipeline_def" not in res.output, res.output
    return res.output


def _exec(src, name):
    ns = {"__name__": f"bench_{name}"}
    exec(compile(src, f"<bench {name}>", "exec"), ns)
    return ns["train_pipe"]


def make_variant(kind, device, data_root, batch, threads, crop=224):
    """-> step() that produces one batch (outputs materialised) and a closer."""
    dev_id = 0 if device == "gpu" else None
    if kind == "pipeline":
        train_pipe = _exec(pipeline_source(device), kind)
        pipe = train_pipe(str(data_root), crop=crop, batch_size=batch, num_threads=threads,
                          device_id=dev_id, seed=42)
        pipe.build()

        def step():
            return pipe.run()

        return step
    src = converted_source(device)
    if kind in _WITHOUT_POOL:
        # (the pool was kept out by _without_pool() before DALI allocated anything)
        from dali_migrate.runtime import _alloc_thread

        _alloc_thread._ENABLED = _WITHOUT_POOL[kind]
        kind = "ours"
    if kind in ("ours", "ours_eager"):
        import dali_migrate.runtime as rt
        from dali_migrate.runtime import _readers

        # what reading and working ahead (runtime/_ahead.py; off with DALI_MIGRATE_READ_AHEAD=0)
        # buys, in the same run
        _readers._READ_AHEAD = kind == "ours"
        with rt.installed_runtime():
            train_pipe = _exec(src, kind)
    elif kind in ("native", "native_capture"):
        if kind == "native_capture":
            capture = src.replace("reader.next_epoch(batch_size=batch_size)",
                                  "reader.next_epoch(batch_size=batch_size, capture=True)")
            # the converted loop's spelling changed once and capture silently measured eager
            assert capture != src, "next_epoch call not found in the converted source"
            src = capture
        train_pipe = _exec(src, kind)
    else:
        raise ValueError(kind)
    gen = train_pipe(str(data_root), crop=crop, batch_size=batch, num_threads=threads,
                     device_id=dev_id, seed=42)

    def step():
        out = next(gen)
        for o in out:
            o.evaluate()  # a consumer touches the data; native ndd may still be running
        return out

    return step


def _serve(kind, device, data_root, batch, threads, warmup):
    """In this process, for `throughput`: build one variant, warm it up, then run the rounds the
    controller asks for on stdin ("N": N timed steps; "" ends), one JSON line per round."""
    step = make_variant(kind, device, data_root, batch, threads)
    for _ in range(warmup):
        step()
    print(json.dumps({"ready": kind}), flush=True)
    for line in sys.stdin:
        n = int(line.strip() or 0)
        if n <= 0:
            break
        # untimed: a prefetching variant has a batch ready when asked again after a pause (the
        # pipeline's queue, our read ahead); the clock starts once that lead is used up
        step()
        c0, t0 = os.times(), time.perf_counter()
        for _ in range(n):
            step()
        t1, c1 = time.perf_counter(), os.times()
        print(json.dumps({"images_per_s": n * batch / (t1 - t0),
                          "cpu_ms_per_image": ((c1.user - c0.user) + (c1.system - c0.system))
                          * 1e3 / (n * batch)}), flush=True)


def throughput(kinds, device, data_root, batch, threads, iters, rounds, warmup, repeats=2,
               settle_s=0.3):
    """images/s per variant, and each round's ratio to the first variant. Every variant lives in
    a process of its own (thread pools and prefetching threads of one must not steal the cores of
    another), and they take turns: round r runs `iters` steps of each variant in turn (the order
    rotating from round to round), the others idle meanwhile. A shared machine's slow and fast
    phases then fall on all variants alike, which timing them one after another did not give (on
    the 2-core VM pipeline mode alone moved 1,240 -> 1,740 img/s between two runs). A process
    also has a speed of its own (the same variant's CPU time per image differed by 20% between
    two processes), so `repeats` starts every variant's process again, `rounds` rounds each.
    `settle_s` between turns lets an idle variant's prefetching finish before the next is timed.
    -> ({kind: median images/s}, {kind: [per-round images/s]}, {kind: [per-round ratio to
    kinds[0]]}, {kind: median CPU ms per image})."""
    res = {k: [] for k in kinds}
    cpu = {k: [] for k in kinds}
    ratios = {k: [] for k in kinds}
    skipped = {}
    for rep in range(repeats):
        _take_turns([k for k in kinds if k not in skipped], kinds[0], device, data_root, batch,
                    threads, iters, rounds, warmup, settle_s, rep, res, cpu, ratios, skipped)
    res = {k: v for k, v in res.items() if v}
    return ({k: statistics.median(v) for k, v in res.items()}, res,
            {k: v for k, v in ratios.items() if v},
            {k: statistics.median(v) for k, v in cpu.items() if v})


def _take_turns(kinds, ref_kind, device, data_root, batch, threads, iters, rounds, warmup,
                settle_s, rep, res, cpu, ratios, skipped):
    procs = {}
    for k in kinds:
        cmd = [sys.executable, "-m", "benchmarks.bench_loop", "--serve", k, "--device", device,
               "--data", str(data_root), "--batch", str(batch), "--threads", str(threads),
               "--warmup", str(warmup)]
        procs[k] = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, cwd=str(_common.REPO))

    def fail(k):
        skipped[k] = (procs[k].stderr.read().strip().splitlines() or ["failed"])[-1:]
        print(f"  [{k}] skipped: {skipped[k][0]}", file=sys.stderr)

    def ask(k, n):
        p = procs[k]
        try:
            p.stdin.write(f"{n}\n")
            p.stdin.flush()
            line = p.stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:
            fail(k)
            return None
        return json.loads(line)

    try:
        live = []
        for k in kinds:  # every variant's build and warm-up
            if procs[k].stdout.readline():
                live.append(k)
            else:
                fail(k)
        for r in range(rounds):
            shift = (r + rep) % len(live) if live else 0
            this = {}
            for k in live[shift:] + live[:shift]:
                time.sleep(settle_s)
                got = ask(k, iters)
                if got is None:
                    continue
                this[k] = got["images_per_s"]
                res[k].append(got["images_per_s"])
                cpu[k].append(got["cpu_ms_per_image"])
            live = [k for k in live if k in this]
            ref = this.get(ref_kind)
            for k, v in this.items():
                if ref:
                    ratios[k].append(v / ref)
    finally:
        for p in procs.values():
            try:
                p.stdin.write("0\n")
                p.stdin.close()
            except (BrokenPipeError, ValueError):
                pass
        for p in procs.values():
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()


def _gpu_used_bytes():
    """Device memory in use on GPU 0 (total - free): each variant runs alone on the GPU in a
    process of its own, so this is that process's (DALI's pools, CUDA context, torch's)."""
    import torch

    free, total = torch.cuda.mem_get_info(0)
    return total - free


def rss_run(kind, device, data_root, batch, threads, iters, every=50):
    """In this process: run `iters` steps of one variant, sampling RSS (and on the GPU, device
    memory in use) every `every` steps."""
    step = make_variant(kind, device, data_root, batch, threads)
    samples, gpu = [], []
    t0 = time.perf_counter()
    for i in range(1, iters + 1):
        step()
        if i % every == 0:
            samples.append((i, _common.rss_bytes()))
            if device == "gpu":
                gpu.append((i, _gpu_used_bytes()))
    dt = time.perf_counter() - t0
    r = {"kind": kind, "iters": iters, "samples": samples, "images_per_s": iters * batch / dt}
    if gpu:
        r["gpu_samples"] = gpu
    return r


def _levels(s, iters):
    half = [v for i, v in s if i > iters // 2]
    q = [v for i, v in s if i >= iters // 4]
    return statistics.median(half) / 2**20, (s[-1][1] - q[0]) / 2**20, max(v for _, v in s) / 2**20


def rss_compare(kinds, device, data_root, batch, threads, iters):
    """Each variant in its own process. Steady state = median RSS over the second half of the
    run; growth = RSS at the end minus RSS at 25% of the run."""
    out = {}
    for k in kinds:
        cmd = [sys.executable, "-m", "benchmarks.bench_loop", "--rss", k, "--device", device,
               "--data", str(data_root), "--batch", str(batch), "--threads", str(threads),
               "--iters", str(iters)]
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=str(_common.REPO))
        if p.returncode != 0:
            print(f"  [rss {k}] failed:\n{p.stderr[-2000:]}", file=sys.stderr)
            continue
        r = json.loads(p.stdout.strip().splitlines()[-1])
        r["steady_mb"], r["growth_mb"], r["peak_mb"] = _levels(r["samples"], iters)
        if "gpu_samples" in r:
            r["gpu_steady_mb"], r["gpu_growth_mb"], r["gpu_peak_mb"] = _levels(r["gpu_samples"], iters)
        out[k] = r
    return out


def default_data(n, lo, hi):
    d = Path(tempfile.gettempdir()) / f"dali_migrate_bench_jpegs_{n}_{lo}_{hi}"
    return _common.make_jpegs(d, n, lo, hi)


# variants that keep DALI's host pool out: whether the allocation thread is on
_WITHOUT_POOL = {"ours_thread": True, "ours_inline": False}


def _without_pool(kind):
    """DALI reads its pool threshold at its first host allocation: set before anything runs. Its
    own default (32 MiB, above any buffer here) keeps every buffer of the loop on malloc."""
    if kind in _WITHOUT_POOL:
        os.environ["DALI_MALLOC_POOL_THRESHOLD"] = str(32 << 20)


def _ci_text(r):
    ci = _common.median_ci(r)
    return f"; median's 95% CI {ci[0]:.2f}-{ci[1]:.2f}, >= 1.0 {_common.verdict(ci)}" if ci else ""


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    ap.add_argument("--data", default=None)
    ap.add_argument("--images", type=int, default=512)
    ap.add_argument("--size", default="200,300")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--iters", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--kinds", default="pipeline,ours,native")
    ap.add_argument("--rss", default=None)
    ap.add_argument("--serve", default=None)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--rss-iters", type=int, default=0)
    args = ap.parse_args(argv)
    threads = args.threads or len(os.sched_getaffinity(0))
    lo, hi = (int(x) for x in args.size.split(","))
    data = Path(args.data) if args.data else default_data(args.images, lo, hi)
    _without_pool(args.rss or args.serve)
    if args.rss:
        r = rss_run(args.rss, args.device, data, args.batch, threads, args.iters)
        print(json.dumps(r))
        return
    if args.serve:
        _serve(args.serve, args.device, data, args.batch, threads, args.warmup)
        return
    med, _, ratios, cpu = throughput(args.kinds.split(","), args.device, data, args.batch,
                                     threads, args.iters, args.rounds, warmup=args.warmup,
                                     repeats=args.repeats)
    for k, v in med.items():
        r = ratios.get(k)
        print(f"{k:<16}{v:>10.1f} img/s  {cpu[k]:.2f} CPU ms/img"
              + (f"  {statistics.median(r):.2f}x {args.kinds.split(',')[0]} "
                 f"(rounds {min(r):.2f}-{max(r):.2f}{_ci_text(r)})" if r else ""))
    if args.rss_iters:
        r = rss_compare(["pipeline", "ours"], args.device, data, args.batch, threads,
                        args.rss_iters)
        for k, v in r.items():
            print(f"rss {k:<12} steady {v['steady_mb']:.1f} MB growth {v['growth_mb']:+.1f} MB")


if __name__ == "__main__":
    main()
