"""Sharded loading across ranks: each rank's converted loop equals its pipeline-mode original,
and the ranks' shards are disjoint and together cover the data set.

- on CPU (runs everywhere, CI included): shard_check.py as 2 plain processes, --device cpu;
- on GPUs (marked multigpu, skipped unless >= 2 CUDA devices): `torchrun --nproc_per_node 2`.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("nvidia.dali")

SCRIPT = Path(__file__).with_name("shard_check.py")


def _check_shards(out, world, num_files=None):
    reports = [json.loads((out / f"rank{r}.json").read_text()) for r in range(world)]
    n = reports[0]["num_files"]
    assert num_files is None or n == num_files
    seen = [set(r["labels"]) for r in reports]
    for r, rep in enumerate(reports):
        assert len(rep["labels"]) == len(seen[r]), f"rank {r} saw a sample twice"
        assert len(rep["labels"]) == rep["shard"][1] - rep["shard"][0]
    for a in range(world):
        for b in range(a + 1, world):
            assert not seen[a] & seen[b], f"ranks {a} and {b} share samples"
    assert set().union(*seen) == set(range(n)), "the shards do not cover the data set"
    return reports


def _cuda_count():
    from dali_migrate.runtime import _backend

    return _backend.cuda_device_count()


def test_two_cpu_processes(fixture_data, tmp_path):
    data = str(fixture_data / "images")
    out = tmp_path / "out"
    procs = [subprocess.Popen([sys.executable, str(SCRIPT), "--device", "cpu", "--rank", str(r),
                               "--world", "2", "--data", data, "--out", str(out)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in range(2)]
    for r, p in enumerate(procs):
        log, _ = p.communicate(timeout=300)
        assert p.returncode == 0, f"rank {r} failed:\n{log}"
    reports = _check_shards(out, 2)
    assert all(rep["device"] == "cpu" for rep in reports)


@pytest.mark.multigpu
@pytest.mark.gpu
@pytest.mark.skipif(_cuda_count() < 2, reason="needs 2 CUDA devices")
def test_torchrun_two_gpus(fixture_data, tmp_path):
    pytest.importorskip("torch")
    data = str(fixture_data / "images")
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
           str(SCRIPT), "--device", "gpu", "--data", data, "--out", str(out)]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    assert res.returncode == 0, f"torchrun failed:\n{res.stdout}\n{res.stderr}"
    reports = _check_shards(out, 2)
    assert sorted(rep["device_id"] for rep in reports) == [0, 1]
