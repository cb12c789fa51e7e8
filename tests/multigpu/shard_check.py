"""One rank of a sharded data-loading check (run by `torchrun --nproc_per_node N`, or as plain
processes with --rank/--world).

Each rank takes its device (LOCAL_RANK) and its reader shard (shard_id=rank, num_shards=world),
converts a sharded `@pipeline_def` with the codemod (`dali_migrate.engine.convert_source`), runs
the converted loop on the runtime AND the pipeline-mode original for that shard, checks their
outputs are equal, and writes the sample identities it saw (file-list labels, unique per file) to
OUT/rank<R>.json. The caller then checks the shards are disjoint and cover the data set.

    torchrun --nproc_per_node 2 tests/multigpu/shard_check.py --data DIR --out DIR
    python tests/multigpu/shard_check.py --device cpu --rank 0 --world 2 --data DIR --out DIR

No torch.distributed is needed: ranks do not communicate; torchrun only launches them and sets
RANK / WORLD_SIZE / LOCAL_RANK.
"""

import argparse
import glob
import importlib.util
import json
import math
import os
import sys
import tempfile

import numpy as np

PIPELINE = '''
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import pipeline_def


@pipeline_def(batch_size=BATCH, num_threads=2, device_id=0, seed=12)
def sharded(file_list, shard_id, num_shards):
    jpegs, labels = fn.readers.file(file_list=file_list, shard_id=shard_id,
                                    num_shards=num_shards, stick_to_shard=True, name="Reader")
    images = fn.decoders.image(jpegs, device="DECODE")
    images = fn.resize(images, resize_x=32, resize_y=32)
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                      mean=[120.0, 115.0, 100.0], std=[60.0, 60.0, 60.0])
    return images, labels
'''


def shard_range(n, shard_id, num_shards):
    """The samples DALI's readers give shard `shard_id` of `num_shards` (no padding)."""
    return n * shard_id // num_shards, n * (shard_id + 1) // num_shards


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _host(x):
    """List of numpy samples of a pipeline TensorList or a runtime Batch."""
    if hasattr(x, "select"):
        b = x.cpu() if x.device.device_type == "gpu" else x
        return [np.asarray(b.select(i)) for i in range(b.batch_size)]
    tl = x.as_cpu() if type(x).__name__.endswith("GPU") else x
    return [np.array(tl.at(i)) for i in range(len(tl))]


def run_rank(data, out, rank, world, device, batch=4):
    from dali_migrate.engine import convert_source
    import dali_migrate.runtime as rt

    files = sorted(glob.glob(os.path.join(data, "**", "*.jp*g"), recursive=True))
    if not files:
        raise SystemExit(f"no JPEGs under {data}")
    work = tempfile.mkdtemp(prefix=f"shard-check-{rank}-")
    file_list = os.path.join(work, "files.txt")
    with open(file_list, "w") as f:  # label = file index: a unique identity per sample
        for i, path in enumerate(files):
            f.write(f"{os.path.abspath(path)} {i}\n")

    source = PIPELINE.replace("BATCH", str(batch)).replace(
        "DECODE", "mixed" if device == "gpu" else "cpu")
    result = convert_source(source)
    if result.markers:
        raise SystemExit(f"the codemod left markers: {[m.reason for m in result.markers]}")
    orig_path = os.path.join(work, "original.py")
    conv_path = os.path.join(work, "converted.py")
    with open(orig_path, "w") as f:
        f.write(source)
    with open(conv_path, "w") as f:
        f.write(result.output)

    device_id = int(os.environ.get("LOCAL_RANK", rank)) if device == "gpu" else None
    params = dict(file_list=file_list, shard_id=rank, num_shards=world)
    original = _load(orig_path, f"shard_original_{rank}")
    pipe = original.sharded(**params, device_id=device_id)
    pipe.build()
    lo, hi = shard_range(len(files), rank, world)
    iters = math.ceil((hi - lo) / batch) + 1  # the whole shard, then into the next epoch

    with rt.installed_runtime():
        converted = _load(conv_path, f"shard_converted_{rank}")
        gen = converted.sharded(**params, device_id=device_id)
        labels_pipe, labels_rt = [], []
        for it in range(iters):
            ref = [_host(o) for o in pipe.run()]
            got = next(gen)
            if device == "gpu":
                assert got[0].device.device_type == "gpu", "images not on the GPU"
                assert got[0].device.device_id == device_id, (got[0].device, device_id)
            got = [_host(o) for o in got]
            for k, (a, b) in enumerate(zip(ref, got)):
                assert len(a) == len(b), f"rank {rank} iter {it} output {k}: batch size"
                for s, (x, y) in enumerate(zip(a, b)):
                    assert x.dtype == y.dtype and x.shape == y.shape, (rank, it, k, s)
                    np.testing.assert_array_equal(
                        x, y, err_msg=f"rank {rank} iter {it} output {k} sample {s}")
            labels_pipe += [int(x.item()) for x in ref[1]]
            labels_rt += [int(x.item()) for x in got[1]]
    assert labels_pipe == labels_rt
    seen = labels_rt[: hi - lo]
    report = {"rank": rank, "world": world, "device": device, "device_id": device_id,
              "num_files": len(files), "shard": [lo, hi], "iterations": iters,
              "labels": seen, "files": [os.path.relpath(files[i], data) for i in seen]}
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
        json.dump(report, f, indent=1)
    print(f"rank {rank}/{world} on {device}{'' if device_id is None else ':' + str(device_id)}:"
          f" {len(seen)} samples, outputs equal over {iters} iterations")
    return report


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="folder with JPEGs (searched recursively)")
    ap.add_argument("--out", required=True, help="folder for rank<R>.json")
    ap.add_argument("--device", choices=["gpu", "cpu"], default="gpu")
    ap.add_argument("--rank", type=int, default=int(os.environ.get("RANK", 0)))
    ap.add_argument("--world", type=int, default=int(os.environ.get("WORLD_SIZE", 1)))
    ap.add_argument("--batch", type=int, default=4)
    a = ap.parse_args(argv)
    run_rank(a.data, a.out, a.rank, a.world, a.device, a.batch)


if __name__ == "__main__":
    sys.exit(main())
