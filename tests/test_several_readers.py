"""Pipelines of several readers, run: the golden case of DeepCAM's loader
(tests/golden/with_pipe_two_readers_deepcam.py, a `with pipeline:` graph in a method, two numpy
readers, DALI's PyTorch iterator counting epochs by the reader named "data", and
``pipe.epoch_size()``) gives the same epochs, batch for batch, in pipeline mode and converted (on
native ndd and on dali_migrate.runtime).

The golden-run/verify headers cannot run a pipeline made in a method, so this test runs the loader
class itself. The label files can be fewer than the data files: the readers then reach the ends of
their epochs at different iterations, and the iterator's epoch must still be the data reader's.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from _modules import load_source

from dali_migrate.device_cpu import to_cpu

torch = pytest.importorskip("torch")
pytest.importorskip("nvidia.dali.plugin.pytorch")
ndd = pytest.importorskip("nvidia.dali.experimental.dynamic")

GOLDEN = Path(__file__).parent / "golden"
CASE = "with_pipe_two_readers_deepcam"


def _load(tmp_path: Path, name: str, source: str):
    return load_source(tmp_path, name, source, prefix="_several_readers_")


def _epochs(loader, n: int) -> list:
    seen = []
    for _ in range(n):
        for data, label, _ in loader:
            seen.append((data, label))
        seen.append("end of epoch")
    return seen


def _cuda() -> bool:
    from dali_migrate.runtime import _backend

    return _backend.cuda_device_count() > 0


# gpu: as written (the readers' outputs moved with .gpu(), the operators on the GPU), where there is one
@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("runtime", [False, True], ids=["native-ndd", "dali_migrate.runtime"])
@pytest.mark.parametrize(
    "labels, settings",
    [
        ("label-*.npy", {}),
        # 4 labels beside 6 data files: the label reader wraps first, the epoch is the data reader's
        ("label-0[0-3].npy", {}),
        ("label-*.npy", {"shuffle": True, "seed": 21}),
        ("label-0[0-4].npy", {"num_shards": 2, "shard_id": 1}),
    ],
    ids=["paired", "fewer-labels", "shuffled", "shard-1-of-2"],
)
def test_deepcam_loader_gives_the_same_epochs(labels, settings, runtime, device, tmp_path, fixture_data):
    if device == "gpu" and not _cuda():
        pytest.skip("no CUDA device")
    moved = to_cpu if device == "cpu" else (lambda text: text)
    source = (GOLDEN / f"{CASE}.py").read_text(encoding="utf-8")
    converted = (GOLDEN / f"{CASE}.expected.py").read_text(encoding="utf-8")
    assert "# dali-migrate:" not in converted and "DALIGenericIterator([" not in converted
    original = _load(tmp_path, "original", moved(source))
    if runtime:
        from dali_migrate.runtime import installed_runtime

        with installed_runtime():  # the converted module's `import ... dynamic as ndd` gets it
            dynamic = _load(tmp_path, "converted", moved(converted))
        assert dynamic.ndd.__name__.startswith("dali_migrate.runtime")
    else:
        dynamic = _load(tmp_path, "converted", moved(converted))
        assert dynamic.ndd.__name__ == "nvidia.dali.experimental.dynamic"
    root = str(fixture_data / "numpy_pairs")
    # the thread count already in force (see tests/golden/README.md: ndd can hang when it drops)
    kwargs = dict(batchsize=2, num_threads=ndd.get_num_threads(), **settings)
    if device == "gpu":
        kwargs["device"] = torch.device("cuda:0")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want_loader = original.CamDaliNumpyDataloader(root, "data-*.npy", labels, **kwargs)
        want = _epochs(want_loader, 4)
    got_loader = dynamic.CamDaliNumpyDataloader(root, "data-*.npy", labels, **kwargs)
    got = _epochs(got_loader, 4)

    assert list(got_loader.epoch_size.items()) == list(want_loader.epoch_size.items())
    assert sum(isinstance(x, tuple) for x in want) >= 4
    assert len(got) == len(want)
    for i, (w, g) in enumerate(zip(want, got)):
        if isinstance(w, str):
            assert g == w, i
            continue
        for tw, tg in zip(w, g):
            assert tw.device == tg.device and tw.device.type == ("cuda" if device == "gpu" else "cpu"), (i, tw.device, tg.device)
            assert tw.dtype == tg.dtype and tw.shape == tg.shape, (i, tw.dtype, tg.dtype, tw.shape, tg.shape)
            assert torch.equal(tw, tg), i
