"""A pipeline defined in one file and imported by another converts with its uses there, in one run.

``tests/golden_projects/split_loader`` is laid out as DALI's SSD example is: ``src/image_pipeline.py``
holds a ``Pipeline`` subclass, ``src/data.py`` imports it, builds it, gives it to
``DALIGenericIterator`` and asks its epoch size. Run over the project, the codemod writes exactly
``expected/``; both projects, moved onto the CPU, give the same batches. Every case where one
file cannot be sure of the other keeps both as they are (imported_pipelines.py).
"""

from __future__ import annotations

import importlib
import shutil
import types
import warnings
from pathlib import Path

import pytest

from _modules import cpu_project, project_on_path
from dali_migrate import imported_pipelines, outside_users, runner
from dali_migrate.model import Status

PROJECT = Path(__file__).resolve().parent / "golden_projects" / "split_loader"
FILES = ("src/image_pipeline.py", "src/data.py")


def _copy(tmp_path: Path, name: str = "proj") -> Path:
    dest = tmp_path / name
    shutil.copytree(PROJECT / "input", dest)
    return dest


def _run(paths, jobs: int = 1):
    return runner.run([Path(p) for p in paths], runner.Options(), jobs=jobs)


def _texts(root: Path) -> dict:
    return {f: (root / f).read_text() for f in FILES}


def test_project_converts_to_the_expected_files(tmp_path):
    root = _copy(tmp_path)
    results = _run(sorted(root.rglob("*.py")))
    assert not [r for r in results if r.error], results
    for f in FILES:
        assert (root / f).read_text() == (PROJECT / "expected" / f).read_text(), f
    # converting the converted project again changes nothing
    _run(sorted(root.rglob("*.py")))
    for f in FILES:
        assert (root / f).read_text() == (PROJECT / "expected" / f).read_text(), f


def test_project_converts_in_worker_processes_too(tmp_path):
    root = _copy(tmp_path)
    for i in range(4):  # enough files that mention DALI for the pool (runner._POOL_THRESHOLD)
        (root / f"other_{i}.py").write_text(f"import nvidia.dali.fn as fn\nX = {i}\n")
    _run(sorted(root.rglob("*.py")), jobs=2)
    for f in FILES:
        assert (root / f).read_text() == (PROJECT / "expected" / f).read_text(), f


def test_workers_are_copies_of_the_process_that_read_the_project(tmp_path, monkeypatch):
    # a worker started fresh would read the project again, after this run wrote some of it
    assert runner._FORK is not None and runner._FORK.get_start_method() == "fork"
    started = []
    real = runner.concurrent.futures.ProcessPoolExecutor

    def pool(*a, **kw):
        started.append(kw.get("mp_context"))
        return real(*a, **kw)

    monkeypatch.setattr(runner.concurrent.futures, "ProcessPoolExecutor", pool)
    root = _copy(tmp_path)
    for i in range(4):
        (root / f"other_{i}.py").write_text(f"import nvidia.dali.fn as fn\nX = {i}\n")
    _run(sorted(root.rglob("*.py")), jobs=2)
    assert started == [runner._FORK]


def test_without_fork_the_files_are_converted_in_this_process(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "_FORK", None)
    monkeypatch.setattr(runner, "_run_pool", lambda *a, **kw: pytest.fail("no pool without fork"))
    root = _copy(tmp_path)
    for i in range(4):
        (root / f"other_{i}.py").write_text(f"import nvidia.dali.fn as fn\nX = {i}\n")
    _run(sorted(root.rglob("*.py")), jobs=2)
    for f in FILES:
        assert (root / f).read_text() == (PROJECT / "expected" / f).read_text(), f


@pytest.mark.parametrize("alone", FILES)
def test_one_file_alone_leaves_both_as_they_are(tmp_path, alone):
    """pre-commit passes only the changed files: converting one would break the other."""
    root = _copy(tmp_path)
    before = _texts(root)
    [result] = _run([root / alone])
    after = _texts(root)
    other = next(f for f in FILES if f != alone)
    assert after[other] == before[other]
    added = [line for line in after[alone].splitlines() if line not in before[alone].splitlines()]
    assert len(added) == 1 and imported_pipelines.ONE_RUN in added[0], added
    assert "dali-migrate convert src/data.py src/image_pipeline.py" in added[0]
    assert result.status == Status.PARTIAL or result.markers
    # the same run again changes nothing; one run over both then converts them, its markers gone
    _run([root / alone])
    assert _texts(root) == after
    _run([root / f for f in FILES])
    for f in FILES:
        assert (root / f).read_text() == (PROJECT / "expected" / f).read_text(), f


def _held_as_today(root: Path) -> None:
    pipe, data = ((root / f).read_text() for f in FILES)
    assert "class ImagePipeline(Pipeline):" in pipe and outside_users.WHY in pipe
    assert "DALIGenericIterator(" in data and "DaliTorchIterator" not in data
    assert imported_pipelines.ONE_RUN not in pipe + data


def test_another_use_in_the_importer_holds_both(tmp_path):
    root = _copy(tmp_path)
    data = root / FILES[1]
    data.write_text(data.read_text().replace(
        "    train_pipe.build()\n", "    train_pipe.build()\n    first = train_pipe.run()\n"))
    _run(sorted(root.rglob("*.py")))
    _held_as_today(root)


def test_a_third_file_importing_it_otherwise_holds_both(tmp_path):
    root = _copy(tmp_path)
    (root / "src" / "probe.py").write_text(
        "import nvidia.dali.fn as fn\nimport src.image_pipeline as pipes\n\n\n"
        "def probe(root):\n    return pipes.ImagePipeline(root, 4, 1, 0)\n")
    _run(sorted(root.rglob("*.py")))
    _held_as_today(root)


def test_an_importer_that_does_not_parse_holds_both(tmp_path):
    root = _copy(tmp_path)
    (root / "src" / "broken.py").write_text("from src.image_pipeline import ImagePipeline\nprint 'x'\n")
    _run(sorted(root.rglob("*.py")))
    _held_as_today(root)


PIPES = '''\
from nvidia.dali import fn, pipeline_def

BATCH = 4


@pipeline_def(batch_size=BATCH, num_threads=1, device_id=0)
def image_pipe(data_dir):
    jpegs, labels = fn.readers.file(file_root=data_dir, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed")
    return fn.resize(images, resize_x=8, resize_y=8), labels
'''
LOADER = '''\
from nvidia.dali.plugin.pytorch import DALIGenericIterator

from .pipes import {imports}


def make_loader(data_dir):
    pipe = image_pipe(data_dir)
    return DALIGenericIterator([pipe], ["images", "labels"], reader_name="Reader")
'''


def _names_project(tmp_path: Path, imports: str) -> Path:
    root = tmp_path / "names"
    (root / "pkg").mkdir(parents=True)
    (root / "setup.cfg").write_text("")
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "pipes.py").write_text(PIPES)
    (root / "pkg" / "loader.py").write_text(LOADER.format(imports=imports))
    _run(sorted(root.rglob("*.py")))
    return root


def test_a_batch_size_read_from_a_module_name_of_the_definer_holds_both(tmp_path):
    """``batch_size=BATCH`` would be written into the loader, where ``BATCH`` is not defined."""
    root = _names_project(tmp_path, "image_pipe")
    pipes, loader = (root / "pkg" / "pipes.py").read_text(), (root / "pkg" / "loader.py").read_text()
    assert "@pipeline_def" in pipes and outside_users.WHY in pipes
    assert "DALIGenericIterator(" in loader and "batch_size=BATCH" not in loader


def test_a_module_name_the_importer_imports_too_converts(tmp_path):
    root = _names_project(tmp_path, "BATCH, image_pipe")
    pipes, loader = (root / "pkg" / "pipes.py").read_text(), (root / "pkg" / "loader.py").read_text()
    assert "def image_pipe(data_dir, *, batch_size=BATCH" in pipes and "# dali-migrate:" not in pipes
    assert "DaliTorchIterator([pipe]" not in loader and "DaliTorchIterator(pipe, " in loader
    assert "batch_size=BATCH, reader_meta=ndd.readers.File(file_root=data_dir).get_metadata()" in loader
    assert "import nvidia.dali.experimental.dynamic as ndd" in loader and "# dali-migrate:" not in loader


# -- the converted project gives the batches the pipeline-mode one gave -------------------------


def _epochs(project: Path, data: Path, threads: int, epochs: int = 2) -> list:
    with project_on_path(project):
        module = importlib.import_module("src.data")
        args = types.SimpleNamespace(data=str(data), batch_size=4, workers=threads)
        loader, epoch_size = module.get_train_loader(args, local_rank=None)
        seen = [("epoch_size", int(epoch_size)), ("len", len(loader))]
        for _ in range(epochs):
            for batch in loader:
                seen.append((batch[0]["images"], batch[0]["labels"]))
            loader.reset()
        return seen


def test_converted_project_gives_the_same_batches(tmp_path, fixture_data):
    torch = pytest.importorskip("torch")
    pytest.importorskip("nvidia.dali.plugin.pytorch")
    ndd = pytest.importorskip("nvidia.dali.experimental.dynamic")
    original = cpu_project(PROJECT / "input", tmp_path / "original", FILES)
    converted = cpu_project(PROJECT / "expected", tmp_path / "converted", FILES)
    threads = ndd.get_num_threads()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _epochs(original, fixture_data, threads)
    got = _epochs(converted, fixture_data, threads)
    assert sum(isinstance(x[0], torch.Tensor) for x in want) >= 12  # 21 images, batch 4: 6 per epoch
    assert len(want) == len(got)
    for i, (x, y) in enumerate(zip(want, got)):
        if isinstance(x[0], torch.Tensor):
            for tx, ty in zip(x, y):
                assert tx.dtype == ty.dtype and tx.shape == ty.shape, (i, tx.dtype, ty.dtype, tx.shape, ty.shape)
                assert torch.equal(tx, ty), i
        else:
            assert x == y, (i, x, y)


ROOT_PIPES = '''\
from nvidia.dali import fn, pipeline_def

ROOT = "/data/train"


@pipeline_def(batch_size=4, num_threads=1, device_id=0)
def image_pipe():
    jpegs, labels = fn.readers.file(file_root=ROOT, name="Reader")
    return jpegs, labels
'''
ROOT_LOADER = '''\
from nvidia.dali.plugin.pytorch import DALIGenericIterator

from . import pipes
from .pipes import ROOT, image_pipe


def make_loader(val):
    {set_root}
    pipe = image_pipe()
    return DALIGenericIterator([pipe], ["images", "labels"], reader_name="Reader")
'''


@pytest.mark.parametrize("setter, set_root", [
    ("", "pass"),
    ("\n\ndef set_root(root):\n    global ROOT\n    ROOT = root\n", "pipes.set_root(val)"),
    ("", "pipes.ROOT = val"),
])
def test_a_definer_name_assigned_again_after_the_import_holds_both(tmp_path, setter, set_root):
    """The pipeline reads the definer's ROOT when it is made; `reader_meta=` written into the
    loader would read the loader's ROOT, bound when it imported it: after `pipes.ROOT = val` (or a
    setter's `global ROOT`) they are different data sets, so different epoch sizes."""
    root = tmp_path / "roots"
    (root / "pkg").mkdir(parents=True)
    (root / "setup.cfg").write_text("")
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "pipes.py").write_text(ROOT_PIPES + setter)
    (root / "pkg" / "loader.py").write_text(ROOT_LOADER.format(set_root=set_root))
    _run(sorted(root.rglob("*.py")))
    pipes, loader = (root / "pkg" / "pipes.py").read_text(), (root / "pkg" / "loader.py").read_text()
    if set_root == "pass":  # nothing assigns it again: both convert
        assert "reader_meta=ndd.readers.File(file_root=ROOT).get_metadata()" in loader and "# dali-migrate:" not in loader
        return
    # (with the setter, the definer's own graph reads a name a function rebinds: held for that too)
    assert "@pipeline_def" in pipes and (outside_users.WHY in pipes or "the graph reads `ROOT`" in pipes)
    assert "DALIGenericIterator(" in loader and "reader_meta=" not in loader
