"""A pipeline that asks its reader's shard inside try/except (DALI's SSD example:
``try: shard_id = torch.distributed.get_rank() ... except RuntimeError: shard_id = 0``) and
computes its batch size from the parsed command line: the iterator over it gets the same
questions asked again, by the same statements right before the pipeline is made
(shared_setup.asked_again), in the same file or in a file that imports the pipeline.

``tests/golden_projects/ssd_loader`` is laid out as the SSD example is; run over the project,
the codemod writes exactly ``expected/``, and both projects, moved onto the CPU, give the same
batches. (It catches ValueError too, which recent torch raises outside a process group, so that
it runs here.)"""

from __future__ import annotations

import importlib
import shutil
import types
import warnings
from pathlib import Path

import pytest

from _helpers import convert
from _modules import cpu_project, project_on_path
from dali_migrate import imported_pipelines, runner

PROJECT = Path(__file__).resolve().parent.parent / "golden_projects" / "ssd_loader"
FILES = ("src/coco_pipeline.py", "src/data.py")


def _run(paths):
    return runner.run([Path(p) for p in paths], runner.Options(), jobs=1)


def test_project_converts_to_the_expected_files(tmp_path):
    root = tmp_path / "proj"
    shutil.copytree(PROJECT / "input", root)
    results = _run(sorted(root.rglob("*.py")))
    assert not [r for r in results if r.error], results
    for f in FILES:
        assert (root / f).read_text() == (PROJECT / "expected" / f).read_text(), f
    _run(sorted(root.rglob("*.py")))  # a second run changes nothing
    for f in FILES:
        assert (root / f).read_text() == (PROJECT / "expected" / f).read_text(), f


@pytest.mark.parametrize("alone", FILES)
def test_one_file_alone_converts_neither(tmp_path, alone):
    # pre-commit passes only the changed files: converting one would break the other
    root = tmp_path / "proj"
    shutil.copytree(PROJECT / "input", root)
    _run([root / alone])
    other = next(f for f in FILES if f != alone)
    assert (root / other).read_text() == (PROJECT / "input" / other).read_text()
    added = [ln for ln in (root / alone).read_text().splitlines()
             if ln not in (PROJECT / "input" / alone).read_text().splitlines()]
    assert len(added) == 1 and imported_pipelines.ONE_RUN in added[0], added


def _epochs(project: Path, data: Path, epochs: int = 2) -> list:
    with project_on_path(project):
        module = importlib.import_module("src.data")
        args = types.SimpleNamespace(data=str(data), batch_size=4, num_workers=1, local_rank=None, seed=5)
        loader = module.get_train_loader(args)
        seen = []
        for _ in range(epochs):
            seen.append([(b[0]["images"].clone(), b[0]["labels"].clone()) for b in loader])
            loader.reset()
        return seen


def test_converted_project_gives_the_same_batches(tmp_path, fixture_data):
    torch = pytest.importorskip("torch")
    pytest.importorskip("nvidia.dali.plugin.pytorch")
    original = cpu_project(PROJECT / "input", tmp_path / "original", FILES)
    converted = cpu_project(PROJECT / "expected", tmp_path / "converted", FILES)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _epochs(original, fixture_data)
    got = _epochs(converted, fixture_data)
    assert [len(e) for e in want] == [len(e) for e in got] == [6, 6]  # 21 images, batch 4, FILL
    for w, g in zip(want, got):
        for (wi, wl), (gi, gl) in zip(w, g):
            assert torch.equal(wi, gi) and torch.equal(wl, gl)


IN_FILE = '''
import torch
from nvidia.dali.pipeline import Pipeline
import nvidia.dali.ops as ops
from nvidia.dali.plugin.pytorch import DALIGenericIterator


class TrainPipe(Pipeline):
    def __init__(self, root, batch_size):
        super().__init__(batch_size=batch_size, num_threads=1, device_id=None, seed=3)
{asks}
        self.input = ops.readers.File(file_root=root, shard_id=shard_id, num_shards=num_shards)

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        return jpegs, labels


def get_loader(root, bs):
    shard_id = 5  # the caller's own name: the statements asked again take others
    pipe = TrainPipe(root, bs)
    return DALIGenericIterator(pipe, ["jpegs", "labels"], reader_name="Reader"), shard_id
'''
ASKS = '''\
        try:
            shard_id = torch.distributed.get_rank()
            num_shards = torch.distributed.get_world_size()
        except RuntimeError:
            shard_id = 0
            num_shards = 1
'''


def test_in_one_file_the_caller_asks_with_names_of_its_own():
    out = convert(IN_FILE.format(asks=ASKS.rstrip("\n")), header="")
    assert "dali-migrate:" not in out
    assert ("    # asked again as TrainPipe() asks it, for its reader's metadata below\n"
            "    try:\n        shard_id_2 = torch.distributed.get_rank()\n") in out
    assert "    except RuntimeError:\n        shard_id_2 = 0\n        num_shards_2 = 1\n    pipe = TrainPipe(root, bs)\n" in out
    assert "reader_meta=ndd.readers.File(file_root=root, shard_id=shard_id_2, num_shards=num_shards_2).get_metadata()" in out


@pytest.mark.parametrize("asks", [
    # the handler keeps the exception: a name the caller would then bind
    ASKS.replace("except RuntimeError:", "except RuntimeError as e:"),
    # a handler that leaves a name unbound
    ASKS.replace("            num_shards = 1\n", "            pass\n"),
    # a call nothing says gives the caller the same answer
    ASKS.replace("torch.distributed.get_rank()", "pick_rank()"),
    # an exception class of the file's own
    ASKS.replace("except RuntimeError:", "except MyError:"),
    # else/finally
    ASKS + "        finally:\n            pass\n",
])
def test_what_cannot_be_asked_again_the_same_way_keeps_the_iterator_marked(asks):
    out = convert(IN_FILE.format(asks=asks.rstrip("\n")), header="")
    assert "computed inside the pipeline" in out and "DALIGenericIterator(pipe" in out, out
