"""Pipelines fed from outside (fn.external_source without source=, dali_migrate/fed_inputs.py): the
golden cases' pipeline-mode input and converted output run on the CPU over the same fed files,
a corrupt (truncated) JPEG among them, and give the same outputs and fail at the same run.

Each side is moved onto the CPU with dali_migrate.device_cpu.to_cpu. The zoo-style case is a
script (module-level loop over ./img): both run as subprocesses in folders of their own and save
each decoded image; the training-style case is imported and its train() called.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dali_migrate.device_cpu import to_cpu

np = pytest.importorskip("numpy")
pytest.importorskip("nvidia.dali")
pytest.importorskip("nvidia.dali.experimental.dynamic")
pytest.importorskip("torch")

GOLDEN = Path(__file__).resolve().parent / "golden"


def _images(fixture_data) -> list:
    return sorted((fixture_data / "images").glob("*/*.jpg"))


def _truncated(path: Path, dest: Path) -> None:
    data = path.read_bytes()
    dest.write_bytes(data[: len(data) // 3])


def _side(tmp_path: Path, name: str, which: str) -> Path:
    src = (GOLDEN / f"{name}{which}.py").read_text(encoding="utf-8")
    folder = tmp_path / (which.strip(".") or "input")
    folder.mkdir()
    (folder / "script.py").write_text(to_cpu(src), encoding="utf-8")
    return folder


def test_zoo_decode_fed_through_run_names(tmp_path, fixture_data):
    images = _images(fixture_data)[:5]
    sides = {}
    for which in ("", ".expected"):
        folder = _side(tmp_path, "external_source_fed_run_inputs", which)
        img = folder / "img"
        img.mkdir()
        for k, path in enumerate(images):
            shutil.copy(path, img / f"{k}_{path.name}")
        _truncated(images[2], img / "2_corrupt.jpg")  # sorted between two good ones
        run = subprocess.run([sys.executable, "script.py"], cwd=folder, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr
        saved = {p.name: np.load(p) for p in sorted((folder / "decoded").glob("*.npy"))}
        sides[which] = (run.stdout.splitlines(), saved)
    (errors, saved), (errors_conv, saved_conv) = sides[""], sides[".expected"]
    assert errors == ["Error loading 2_corrupt.jpg"]
    assert errors_conv == errors
    # every good file decoded on both sides, the ones after the corrupt file included
    assert sorted(saved) == sorted(saved_conv) == sorted(f"{k}_{p.name}.npy" for k, p in enumerate(images))
    for key, value in saved.items():
        other = saved_conv[key]
        assert (value.dtype, value.shape) == (other.dtype, other.shape), key
        assert np.array_equal(value, other), key


def _load(folder: Path, module_name: str):
    spec = importlib.util.spec_from_file_location(module_name, folder / "script.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_training_loop_fed_with_feed_input(tmp_path, fixture_data):
    root = tmp_path / "data"
    for path in _images(fixture_data):
        (root / path.parent.name).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, root / path.parent.name / path.name)
    # a corrupt file in the second batch of the first class
    _truncated(root / "circle" / "circle_05.jpg", root / "circle" / "circle_05.jpg")
    results = {}
    for which in ("", ".expected"):
        module = _load(_side(tmp_path, "external_source_fed_feed_input", which), f"fed_feed_input{which.replace('.', '_')}")
        results[which] = module.train(str(root))
    seen, seen_conv = results[""], results[".expected"]
    n = len(_images(fixture_data))
    batches_per_epoch = -(-n // 4)
    assert len(seen) == len(seen_conv) == 2 * batches_per_epoch
    assert n % 4, "the fixture must leave a last batch smaller than batch_size"
    failed = [i for i, s in enumerate(seen) if s is None]
    assert failed == [1, 1 + batches_per_epoch]  # the batch holding circle_05.jpg, in each epoch
    assert [i for i, s in enumerate(seen_conv) if s is None] == failed
    for got, want in zip(seen_conv, seen):
        if want is None:
            continue
        for a, b in zip(got, want):
            assert (a.dtype, a.shape) == (b.dtype, b.shape)
            assert np.array_equal(a, b)
