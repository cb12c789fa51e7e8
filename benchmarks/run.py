"""One entry point for the performance suites (issue 6). Prints tables, writes JSON.

    python -m benchmarks.run [--suite cpu|gpu|all] [--quick] [--json OUT] [--only PART,...]
    python benchmarks/run.py ...                     (same)

CPU suite (any machine):
  overhead  per-call cost of `flip` on an 8x8x3 uint8 tensor, batch 1 and 32: our runtime vs
            native ndd eager and native ndd sync_cpu (interleaved repetitions, medians); in
            the same interleaving DALI's operator run alone, so that the ndd layer's own cost
            (the call minus that run) is compared too ("layer ratio")
  loop      training-loop throughput (file reader, CPU decode, random_resized_crop,
            crop_mirror_normalize + random mirror, batch 32) over a synthetic JPEG set made in a
            temp dir: pipeline mode vs the codemod's conversion of it on our runtime and on
            native ndd; each variant in its own process, taking turns round by round
  memory    steady-state host RSS and growth of that loop over 2,000 iterations (200 with --quick)
  codemod   `dali-migrate convert --check` on 5,000 files without DALI; convert_source vs a bare
            libcst parse + codegen on ~300-line DALI files; --jobs 2 vs --jobs 1
GPU suite (skipped cleanly without a CUDA device):
  overhead  the same flip on the GPU
  loop      RN50 input loop (file reader, GPU decode, random_resized_crop 224,
            crop_mirror_normalize + random mirror) at batch 64 and 256 over 4,096 synthetic
            300-500 px JPEGs: pipeline mode vs native ndd eager vs native ndd capture=True vs our
            runtime running the converted code

Ratios are ours / reference: for per-call cost lower is better (goal <= 0.25), for throughput
higher is better (goal >= 1.0), for memory closer to 1.0 (goal within 10%).
"""

import argparse
import datetime
import json
import os
import statistics
import sys
import tempfile
import time
import traceback
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import _common  # noqa: E402


def _print_table(title, rows, headers):
    print(f"\n## {title}\n")
    print(_common.fmt_table(rows, headers))
    sys.stdout.flush()


def _overhead_rows(r):
    """(rows, headers) of bench_overhead.measure's result: the per-call times and their ratios,
    then DALI's operator run alone (as ours runs it / as native's default context runs it) and
    the ratios of what the ndd layer adds to it (ours / native)."""
    rows = [[case, f"{v['ours_us']:.1f}", f"{v['native_eager_us']:.1f}", f"{v['ratio_eager']:.2f}",
             f"{v['native_sync_us']:.1f}", f"{v['ratio_sync']:.2f}",
             f"{v['dali_alone_us']:.1f} / {v['dali_alone_default_us']:.1f}",
             f"{v['overhead_ratio_eager']:.2f}", f"{v['overhead_ratio_sync']:.2f}"] for case, v in r.items()]
    return rows, ["case", "ours", "native eager", "ratio", "native sync_cpu", "ratio",
                  "DALI run alone (ours / default)", "layer ratio eager", "layer ratio sync"]


def cpu_overhead(quick):
    from benchmarks import bench_overhead

    r = bench_overhead.measure("cpu", iters=150 if quick else 300, reps=5 if quick else 11)
    _print_table("Per-call overhead, CPU flip 8x8x3 uint8 (us per call, median)", *_overhead_rows(r))
    for v in r.values():
        v.pop("samples_us", None)
    # Interleaved, the other variants' worker threads keep the cores awake between our calls; each
    # variant alone also pays for waking an idle core (bench_overhead.py --alone)
    alone = bench_overhead.measure_alone("cpu", iters=150 if quick else 300, reps=5 if quick else 9,
                                         rounds=1 if quick else 2)
    rows = [[case, f"{v['ours_us']:.1f}", f"{v['native_eager_us']:.1f}", f"{v['ratio_eager']:.2f}",
             f"{v['native_sync_us']:.1f}", f"{v['ratio_sync']:.2f}"] for case, v in alone.items()]
    _print_table("The same, each variant alone in a process of its own", rows,
                 ["case", "ours", "native eager", "ratio", "native sync_cpu", "ratio"])
    for v in alone.values():
        v.pop("samples_us", None)
    r["alone"] = alone
    return r


def _loop_rows(med, ratios, batch, cpu):
    rows = []
    for k, v in med.items():
        r = ratios.get(k)
        ci = _common.median_ci(r) if r else None
        rows.append([f"batch {batch}", k, f"{v:.0f}",
                     f"{statistics.median(r):.2f}" if r else "-",
                     f"{ci[0]:.2f}-{ci[1]:.2f}" if ci else "-",
                     f"{min(r):.2f}-{max(r):.2f}" if r else "-",
                     f"{cpu[k]:.2f}" if k in cpu else "-"])
    return rows


def _ratio_summary(r):
    """The median of the rounds' ratios, its 95% bootstrap interval and what that says of >= 1.0."""
    ci = _common.median_ci(r)
    return {"ratio_vs_pipeline": statistics.median(r), "ratio_ci95": list(ci) if ci else None,
            "at_least_1": _common.verdict(ci), "round_ratios": r}


def cpu_loop(quick, data):
    from benchmarks import bench_loop

    threads = len(os.sched_getaffinity(0))
    med, samples, ratios, cpu = bench_loop.throughput(
        ["pipeline", "ours", "ours_eager", "native"], "cpu", data, 32, threads,
        iters=4 if quick else 16, rounds=3 if quick else 6, warmup=3, repeats=1 if quick else 3)
    _print_table("CPU loop throughput, batch 32 (images/s, median; ratio vs pipeline mode: "
                 "median of the rounds' ratios, variants taking turns)",
                 _loop_rows(med, ratios, batch=32, cpu=cpu),
                 ["case", "variant", "img/s", "ratio", "95% CI", "rounds' ratios", "CPU ms/img"])
    out = {k: {"images_per_s": v, "cpu_ms_per_image": cpu.get(k)} for k, v in med.items()}
    for k, r in ratios.items():
        out[k].update(_ratio_summary(r))
    out["_samples"] = samples
    return out


def cpu_memory(quick, data):
    from benchmarks import bench_loop

    threads = len(os.sched_getaffinity(0))
    iters = 200 if quick else 2000
    r = bench_loop.rss_compare(["pipeline", "ours"], "cpu", data, 32, threads, iters)
    ref = r.get("pipeline")
    rows = []
    for k, v in r.items():
        rows.append([k, iters, f"{v['steady_mb']:.1f}", f"{v['growth_mb']:+.1f}",
                     f"{v['peak_mb']:.1f}",
                     f"{v['steady_mb'] / ref['steady_mb']:.2f}" if ref else "-"])
    _print_table("Host RSS of the CPU loop (MB; steady = median of 2nd half, growth = end - 25%)",
                 rows, ["variant", "iters", "steady", "growth", "peak", "ratio"])
    for v in r.values():
        v["samples"] = v["samples"][:: max(1, len(v["samples"]) // 40)]
    return r


def cpu_codemod(quick):
    import subprocess

    # In a fresh process: the codemod never imports DALI, and importing it slows libcst.
    out = Path(tempfile.mkdtemp(prefix="dm_codemod_json_")) / "codemod.json"
    cmd = [sys.executable, "-m", "benchmarks.bench_codemod", "--plain",
           str(1000 if quick else 5000), "--dali", str(3 if quick else 48), "--json", str(out)]
    if not quick:
        cmd.append("--profile")
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=str(_common.REPO))
    if p.returncode != 0:
        raise RuntimeError(f"bench_codemod failed: {p.stderr[-1500:]}")
    r = json.loads(out.read_text())
    prof = r.pop("profile", None)
    rows = [
        ["--check, files without DALI", f"{r['plain_files']} files",
         f"{r['plain_check_s']:.2f} s", "goal < 5 s (5,000 files)"],
        ["convert_source / (parse + codegen)",
         f"{r['dali_files']} files x {r['dali_mean_lines']:.0f} lines",
         f"{r['dali_convert_over_parse']:.1f}x ({r['dali_convert_per_file_s']:.2f} s/file)",
         "goal <= 1.5x"],
        ["  the same, bare parse with the cycle collector paused as convert_source pauses it", "",
         f"{r['dali_convert_over_parse_gc_off']:.1f}x", ""],
        ["  the first pass over these files (helper classes' text parsed once per process)", "",
         f"{r['dali_first_pass_over_parse']:.1f}x" if "dali_first_pass_over_parse" in r else "-", ""],
    ]
    if "dali_jobs2_speedup" in r:
        rows.append(["--jobs 2 vs --jobs 1 (DALI files)", f"{r['dali_files']} files",
                     f"{r['dali_jobs2_speedup']:.2f}x ({r['dali_check_jobs1_s']:.1f} s -> "
                     f"{r['dali_check_jobs2_s']:.1f} s)", "goal >= 1.8x"])
    if "plain_jobs2_speedup" in r:
        rows.append(["--jobs 2 vs --jobs 1 (files without DALI)", f"{r['plain_files']} files",
                     f"{r['plain_jobs2_speedup']:.2f}x ({r['plain_check_jobs1_s']:.2f} s -> "
                     f"{r['plain_check_jobs2_s']:.2f} s)", ""])
    _print_table("Codemod", rows, ["measure", "input", "result", "goal"])
    if prof:
        r["profile_top"] = prof
    return r


def gpu_overhead(quick):
    from benchmarks import bench_overhead

    r = bench_overhead.measure("gpu", iters=100 if quick else 200, reps=5 if quick else 9)
    _print_table("Per-call overhead, GPU flip 8x8x3 uint8 (us per call, median)", *_overhead_rows(r))
    for v in r.values():
        v.pop("samples_us", None)
    return r


def gpu_loop(quick, data):
    from benchmarks import bench_loop

    threads = min(len(os.sched_getaffinity(0)), 8)
    out = {}
    rows = []
    for batch in (64, 256):
        iters = max(2, (512 if quick else 2048) // batch)
        med, samples, ratios, cpu = bench_loop.throughput(
            ["pipeline", "native", "native_capture", "ours", "ours_eager"], "gpu", data, batch,
            threads, iters=iters, rounds=2 if quick else 4, warmup=3, repeats=1 if quick else 2)
        rows += _loop_rows(med, ratios, batch, cpu)
        out[f"batch {batch}"] = {k: {"images_per_s": v, **(_ratio_summary(ratios[k]) if k in ratios else {})}
                                 for k, v in med.items()}
        if "native" in med and "ours" in med:
            out[f"batch {batch}"]["ours_vs_native_eager"] = med["ours"] / med["native"]
        if "native_capture" in ratios and "ours" in ratios:
            per_round = [a / b for a, b in zip(ratios["ours"], ratios["native_capture"])]
            ci = _common.median_ci(per_round)
            out[f"batch {batch}"]["ours_vs_native_capture"] = statistics.median(per_round)
            out[f"batch {batch}"]["ours_vs_native_capture_ci95"] = list(ci) if ci else None
            out[f"batch {batch}"]["ours_vs_native_capture_at_least_1"] = _common.verdict(ci)
            rows.append([f"batch {batch}", "ours / capture", "-", f"{statistics.median(per_round):.2f}",
                         f"{ci[0]:.2f}-{ci[1]:.2f}" if ci else "-",
                         f"{min(per_round):.2f}-{max(per_round):.2f}", "-"])
    _print_table("GPU RN50 loop throughput (images/s, median; ratio vs pipeline mode: median of "
                 "the rounds' ratios, variants taking turns)", rows,
                 ["case", "variant", "img/s", "ratio", "95% CI", "rounds' ratios", "CPU ms/img"])
    return out


def gpu_memory(quick, data):
    from benchmarks import bench_loop

    threads = min(len(os.sched_getaffinity(0)), 8)
    iters = 500 if quick else 10000  # the goal: flat over 10,000 iterations
    r = bench_loop.rss_compare(["pipeline", "ours"], "gpu", data, 64, threads, iters)
    ref = r.get("pipeline")
    rows = []
    for k, v in r.items():
        rows.append([k, iters, f"{v['steady_mb']:.0f}", f"{v['growth_mb']:+.0f}",
                     f"{v['steady_mb'] / ref['steady_mb']:.2f}" if ref else "-",
                     f"{v['gpu_steady_mb']:.0f}", f"{v['gpu_growth_mb']:+.0f}",
                     f"{v['gpu_steady_mb'] / ref['gpu_steady_mb']:.2f}" if ref else "-"])
    _print_table("Memory of the GPU RN50 loop, batch 64 (MB; steady = median of 2nd half, growth = "
                 "end - 25%; GPU = device memory in use)", rows,
                 ["variant", "iterations", "host RSS", "growth", "ratio", "GPU", "growth", "ratio"])
    for v in r.values():
        v.pop("samples", None)
        v.pop("gpu_samples", None)
    return r


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--suite", choices=["cpu", "gpu", "all"], default="all")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke run)")
    ap.add_argument("--json", default=None, help="write all results here")
    ap.add_argument("--only", default=None,
                    help="comma-separated parts: overhead,loop,memory,codemod")
    ap.add_argument("--data-dir", default=None,
                    help="where the synthetic JPEG sets go (default: the temp dir; reused)")
    args = ap.parse_args(argv)
    only = set(args.only.split(",")) if args.only else None

    def want(part):
        return only is None or part in only

    info = _common.machine()
    started = datetime.datetime.now(datetime.timezone.utc)
    print(f"# dali-migrate benchmarks, {started:%Y-%m-%d %H:%M} UTC")
    print(f"machine: {info['cpu']}, {info['cores']} cores; GPU: "
          f"{', '.join(info['gpus']) or 'none'}; DALI {info['dali']}; Python {info['python']} "
          f"(sum(range(1000)): {info['python_ref_us']:.1f} us)")
    print(f"command: python -m benchmarks.run {' '.join(argv if argv is not None else sys.argv[1:])}")
    results = {"date": started.isoformat(), "machine": info,
               "command": "python -m benchmarks.run " + " ".join(
                   argv if argv is not None else sys.argv[1:]),
               "quick": args.quick, "cpu": {}, "gpu": {}}
    base = Path(args.data_dir) if args.data_dir else Path(tempfile.gettempdir())
    t0 = time.perf_counter()

    def part(suite, name, fn, *a):
        try:
            results[suite][name] = fn(*a)
        except Exception as e:  # one broken part must not lose the others' figures
            traceback.print_exc()
            results[suite][name] = {"error": f"{type(e).__name__}: {e}"}
            print(f"\n[{suite} {name}] FAILED: {type(e).__name__}: {e}")

    if args.suite in ("cpu", "all"):
        need_data = want("loop") or want("memory")
        data = _common.make_jpegs(base / "dali_migrate_bench_jpegs_512_200_300", 512, 200,
                                  300) if need_data else None
        if want("overhead"):
            part("cpu", "overhead", cpu_overhead, args.quick)
        if want("loop"):
            part("cpu", "loop", cpu_loop, args.quick, data)
        if want("memory"):
            part("cpu", "memory", cpu_memory, args.quick, data)
        if want("codemod"):
            part("cpu", "codemod", cpu_codemod, args.quick)
    if args.suite in ("gpu", "all"):
        if not _common.have_gpu():
            print("\n## GPU suite: skipped (no CUDA device)")
            results["gpu"] = {"skipped": "no CUDA device"}
        else:
            if want("overhead"):
                part("gpu", "overhead", gpu_overhead, args.quick)
            if want("loop") or want("memory"):
                n = 1024 if args.quick else 4096
                data = _common.make_jpegs(base / f"dali_migrate_bench_jpegs_{n}_300_500", n,
                                          300, 500)
            if want("loop"):
                part("gpu", "loop", gpu_loop, args.quick, data)
            if want("memory"):
                part("gpu", "memory", gpu_memory, args.quick, data)
    results["seconds"] = time.perf_counter() - t0
    print(f"\n(total {results['seconds']:.0f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))
        print(f"wrote {args.json}")
    return results


if __name__ == "__main__":
    main()
