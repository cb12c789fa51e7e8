"""A definition that another file of the project imports stays as it was (outside_users.py,
imported_elsewhere.py): the codemod converts a pipeline's uses only in the file that defines it,
so converting an imported pipeline would leave the importer building and running a generator.

Temporary projects on disk (a ``.git`` directory or a ``pyproject.toml`` marks their root), the
real codemod, through runner.process_file and the CLI.
"""

from __future__ import annotations

import json
import os
import re
import textwrap
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from dali_migrate import engine, outside_users, runner, walk
from dali_migrate.cli import main
from dali_migrate.model import Status

PIPES = '''\
from nvidia.dali import pipeline_def, fn


@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def train_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root)
    return fn.decoders.image(jpegs), labels
'''

TRAIN = '''\
import sys

from pkg.pipes import train_pipe

pipe = train_pipe(sys.argv[1])
pipe.build()
print(pipe.run())
'''

COCO_PIPELINE = '''\
import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline


class COCOPipeline(Pipeline):
    def __init__(self, root, batch_size):
        super(COCOPipeline, self).__init__(batch_size=batch_size, num_threads=1, device_id=None, seed=3)
        self.input = ops.readers.File(file_root=root)
        self.decode = ops.decoders.Image(device="cpu", output_type=types.RGB)

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        return self.decode(jpegs), labels
'''

DATA = '''\
from src.coco_pipeline import COCOPipeline
from nvidia.dali.plugin.pytorch import DALIGenericIterator


def get_train_loader(root):
    train_pipe = COCOPipeline(root, 4)
    return DALIGenericIterator(train_pipe, ["images", "labels"], reader_name="Reader")
'''

_MARKER_LINE = re.compile(r"^[ \t]*# dali-migrate: .*\n", re.M)


@pytest.fixture(autouse=True)
def _fresh_projects():
    # each test's project is new, but a cached one must not outlive the test
    outside_users._projects.clear()
    yield
    outside_users._projects.clear()


def _project(root: Path, files: dict, marker: str = ".git") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    if marker == ".git":
        (root / ".git").mkdir(parents=True)
    elif marker:
        (root / marker).write_text("")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _convert(path: Path, **options) -> runner.FileResult:
    return runner.process_file(path, runner.Options(**options))


def _markers(text: str) -> list:
    return [line.strip() for line in text.splitlines() if "# dali-migrate:" in line]


def _without_markers(text: str) -> str:
    return _MARKER_LINE.sub("", text)


def test_imported_pipeline_def_stays_with_a_marker_naming_the_importer(tmp_path):
    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/pipes.py": PIPES, "train.py": TRAIN})
    r = _convert(root / "pkg" / "pipes.py")
    out = (root / "pkg" / "pipes.py").read_text()
    assert _without_markers(out) == PIPES
    [marker] = _markers(out)
    assert marker.startswith("# dali-migrate: [pipeline-def] pipeline not converted: imported by train.py:3 "
                             "(`from pkg.pipes import train_pipe`)")
    assert "cannot convert its uses with it" in marker and "would break" in marker
    assert out.index(marker) < out.index("@pipeline_def")  # above the definition it is about
    assert (r.status, r.pipelines_converted, r.pipelines_left) == (Status.NEEDS_REVIEW, 0, 1)
    assert (root / "train.py").read_text() == TRAIN


def test_pipeline_nobody_imports_converts(tmp_path):
    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/pipes.py": PIPES,
                               "train.py": TRAIN.replace("pkg.pipes", "pkg.other")})
    r = _convert(root / "pkg" / "pipes.py")
    out = (root / "pkg" / "pipes.py").read_text()
    assert (r.status, r.pipelines_converted) == (Status.CONVERTED, 1)
    assert "def train_pipe(root, *, batch_size=2" in out and "ndd.readers.File" in out
    assert not _markers(out)


def test_imported_pipeline_subclass_stays_a_class(tmp_path):
    # DALI's single_stage_detector example: src/data.py gives COCOPipeline(...) to DALIGenericIterator
    root = _project(tmp_path, {"src/coco_pipeline.py": COCO_PIPELINE, "src/data.py": DATA}, marker="pyproject.toml")
    _convert(root / "src" / "data.py")
    _convert(root / "src" / "coco_pipeline.py")
    out = (root / "src" / "coco_pipeline.py").read_text()
    assert _without_markers(out) == COCO_PIPELINE
    [marker] = _markers(out)
    assert marker.startswith("# dali-migrate: [legacy-pipeline] not converted: imported by src/data.py:1 "
                             "(`from src.coco_pipeline import COCOPipeline`)")
    # its user is only marked: nothing there assumes a converted pipeline
    assert _without_markers((root / "src" / "data.py").read_text()) == DATA


def test_the_same_subclass_converts_where_nothing_imports_it(tmp_path):
    root = _project(tmp_path, {"src/coco_pipeline.py": COCO_PIPELINE}, marker="pyproject.toml")
    r = _convert(root / "src" / "coco_pipeline.py")
    assert r.pipelines_converted == 1
    assert "def COCOPipeline(root, batch_size, *" in (root / "src" / "coco_pipeline.py").read_text()


def test_a_plain_constant_imported_elsewhere_does_not_stop_the_conversion(tmp_path):
    pipes = PIPES + "\nBATCH = 8\n"
    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/pipes.py": pipes,
                               "train.py": "from pkg.pipes import BATCH\nprint(BATCH)\n"})
    r = _convert(root / "pkg" / "pipes.py")
    assert (r.status, r.pipelines_converted) == (Status.CONVERTED, 1)
    assert "BATCH = 8" in (root / "pkg" / "pipes.py").read_text()


def _notebook(*cells: str) -> str:
    return json.dumps({
        "cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# Training\n"]}] + [
            {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
             "source": c.splitlines(keepends=True)} for c in cells
        ],
        "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5,
    }, indent=1) + "\n"


def test_a_notebook_importing_it_keeps_it(tmp_path):
    nb = _notebook("%matplotlib inline\nimport numpy as np", "!ls\nfrom pkg.pipes import train_pipe\npipe = train_pipe('x')")
    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/pipes.py": PIPES, "explore.ipynb": nb})
    _convert(root / "pkg" / "pipes.py")
    out = (root / "pkg" / "pipes.py").read_text()
    assert _without_markers(out) == PIPES
    # cells as the report counts them (the markdown one too), the line within the cell
    assert "imported by explore.ipynb, cell 3, line 2 (`from pkg.pipes import train_pipe`)" in _markers(out)[0]


@pytest.mark.parametrize("where, importer, said", [
    ("pkg/train.py", "from .pipes import train_pipe\n", "pkg/train.py:1 (`from .pipes import train_pipe`)"),
    ("pkg/sub/train.py", "from ..pipes import train_pipe as tp\n", "pkg/sub/train.py:1 (`from ..pipes import train_pipe as tp`)"),
    ("pkg/train.py", "from . import pipes\n\npipe = pipes.train_pipe('x')\n",
     "pkg/train.py:1 (`from . import pipes`, then `pipes.train_pipe`)"),
    ("train.py", "import pkg.pipes as m\n\npipe = m.train_pipe('x')\n",
     "train.py:1 (`import pkg.pipes as m`, then `m.train_pipe`)"),
    ("train.py", "import pkg.pipes\n\npipe = pkg.pipes.train_pipe('x')\n",
     "train.py:1 (`import pkg.pipes`, then `pkg.pipes.train_pipe`)"),
    ("train.py", "from pkg.pipes import *\n\npipe = train_pipe('x')\n", "train.py:1 (`from pkg.pipes import *`)"),
    # sys.path at src/: the import names the module from there
    ("scripts/train.py", "from pipes import train_pipe\n", "scripts/train.py:1 (`from pipes import train_pipe`)"),
])
def test_import_forms(tmp_path, where, importer, said):
    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/pipes.py": PIPES, where: importer})
    _convert(root / "pkg" / "pipes.py")
    out = (root / "pkg" / "pipes.py").read_text()
    assert _without_markers(out) == PIPES
    assert f"imported by {said}," in _markers(out)[0]


@pytest.mark.parametrize("where, importer", [
    ("other/train.py", "from .pipes import train_pipe\n"),  # a relative import of another package's module
    ("pkg/train.py", "from . import pipes\n\nprint(pipes.BATCH)\n"),  # the module, but not the pipeline
    ("train.py", "from pkg.pipes import *\n\nprint(1)\n"),  # a star import that does not use it
    ("train.py", "import pkg.pipes_extra\nfrom pkg.pipes_extra import train_pipe\n"),  # another module
    ("train.py", "# from pkg.pipes import train_pipe\ntext = 'from pkg.pipes import train_pipe'\n"),
])
def test_what_does_not_import_it(tmp_path, where, importer):
    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/pipes.py": PIPES, where: importer})
    r = _convert(root / "pkg" / "pipes.py")
    assert r.pipelines_converted == 1 and not r.markers


def test_several_importers_are_counted(tmp_path):
    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/pipes.py": PIPES, "train.py": TRAIN,
                               "eval.py": "from pkg.pipes import train_pipe\n", "pkg/x.py": "from .pipes import train_pipe\n"})
    _convert(root / "pkg" / "pipes.py")
    [marker] = _markers((root / "pkg" / "pipes.py").read_text())
    assert "imported by eval.py:1 (`from pkg.pipes import train_pipe`) and 2 more (pkg/x.py:1, train.py:3)," in marker


def test_a_function_converted_with_the_pipeline_keeps_it(tmp_path):
    pipes = PIPES + textwrap.dedent('''

        def run_and_print(pipe):
            pipe.build()
            print(pipe.run())


        def main():
            run_and_print(train_pipe("x"))
    ''')
    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/pipes.py": pipes,
                               "train.py": "from pkg.pipes import run_and_print\n"})
    r = _convert(root / "pkg" / "pipes.py")
    out = (root / "pkg" / "pipes.py").read_text()
    assert _without_markers(out) == pipes and r.pipelines_left == 1
    pipe_marker, kept_marker = _markers(out)
    assert pipe_marker.startswith("# dali-migrate: [pipeline-def] pipeline not converted: `run_and_print`, which "
                                  "converting it would change, is imported by train.py:1")
    assert kept_marker.startswith("# dali-migrate: [imported-elsewhere] kept as it is: imported by train.py:1")
    assert out.index(kept_marker) < out.index("def run_and_print")


def test_a_module_variable_holding_the_pipeline_keeps_it(tmp_path):
    pipes = PIPES + '\n\npipe = train_pipe("x", prefetch_queue_depth=2)\n'
    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/pipes.py": pipes,
                               "train.py": "from pkg.pipes import pipe\npipe.build()\n"})
    _convert(root / "pkg" / "pipes.py")
    out = (root / "pkg" / "pipes.py").read_text()
    assert _without_markers(out) == pipes
    assert [m.split("]")[0] for m in _markers(out)] == ["# dali-migrate: [pipeline-def", "# dali-migrate: [imported-elsewhere"]


def test_an_imported_helper_stays_defined_while_the_pipeline_converts(tmp_path):
    pipes = textwrap.dedent('''\
        from nvidia.dali import pipeline_def, fn


        def augment(images):
            return fn.flip(images, horizontal=1)


        @pipeline_def(batch_size=2, num_threads=1, device_id=None)
        def train_pipe(root):
            jpegs, labels = fn.readers.file(file_root=root)
            return augment(fn.decoders.image(jpegs)), labels
    ''')
    helper = pipes.split("@pipeline_def")[0].split("\n\n\n", 1)[1]
    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/pipes.py": pipes,
                               "other.py": "from pkg.pipes import augment\n"})
    r = _convert(root / "pkg" / "pipes.py")
    out = (root / "pkg" / "pipes.py").read_text()
    assert r.pipelines_converted == 1
    assert "ndd.flip(" in out  # written into the converted pipeline
    assert helper.strip() in _without_markers(out)  # and still defined, in pipeline mode, for other.py
    assert "[imported-elsewhere] kept as it is: imported by other.py:1 (`from pkg.pipes import augment`)" in out
    # without the importer the helper goes with its last use
    (root / "other.py").unlink()
    (root / "pkg" / "pipes.py").write_text(pipes)
    outside_users._projects.clear()
    _convert(root / "pkg" / "pipes.py")
    assert "def augment" not in (root / "pkg" / "pipes.py").read_text()


def test_an_import_other_files_take_from_here_is_kept(tmp_path):
    # `from common import *` gives train.py DALI's fn: converting common.py must not drop it
    root = _project(tmp_path, {"common.py": PIPES, "train.py": "from common import *\n\nflip = fn.flip\n"})
    r = _convert(root / "common.py")
    out = (root / "common.py").read_text()
    assert r.pipelines_converted == 1
    assert out.startswith("from nvidia.dali import fn\n") and not _markers(out)


# -- imported functions that only use a pipeline ------------------------------------------------
#
# NVIDIA's image classification example: dataloaders.py builds the pipeline, wraps it in an
# iterator and returns that; main.py imports the function and iterates what it gets. Converting
# dataloaders.py changes the function's body, not how it is called nor what its caller can do
# with what it returns: it converts, and the pipeline with it.

DATALOADERS = '''\
import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin.pytorch import DALIClassificationIterator, LastBatchPolicy


class HybridTrainPipe(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data_dir, crop):
        super(HybridTrainPipe, self).__init__(batch_size, num_threads, device_id, seed=12)
        self.input = ops.readers.File(file_root=data_dir, random_shuffle=False)
        self.decode = ops.decoders.Image(device="mixed", output_type=types.RGB)
        self.res = ops.Resize(device="gpu", resize_x=crop, resize_y=crop)

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        images = self.res(self.decode(jpegs))
        return [images, labels.gpu()]


def get_train_loader(data_dir, batch_size, workers, crop=8):
    pipe = HybridTrainPipe(batch_size=batch_size, num_threads=workers, device_id=0, data_dir=data_dir, crop=crop)
    pipe.build()
    return DALIClassificationIterator(pipe, reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL)


def get_train_loader_and_steps(data_dir, batch_size, workers, crop=8):
    pipe = HybridTrainPipe(batch_size=batch_size, num_threads=workers, device_id=0, data_dir=data_dir, crop=crop)
    pipe.build()
    train_loader = DALIClassificationIterator(pipe, reader_name="Reader", last_batch_policy=LastBatchPolicy.DROP)
    return train_loader, int(pipe.epoch_size("Reader") / batch_size)
'''

MAIN = '''\
from dataloaders import get_train_loader, get_train_loader_and_steps


def epochs(data_dir, workers):
    seen = []
    loader = get_train_loader(data_dir, 4, workers)
    for _ in range(2):
        for data in loader:
            seen.append((data[0]["data"], data[0]["label"]))
        seen.append(("len", len(loader), loader.size))
        loader.reset()
    loader, steps = get_train_loader_and_steps(data_dir, 8, workers)
    seen.append(("steps", steps, len(loader)))
    for data in loader:
        seen.append((data[0]["data"], data[0]["label"]))
    return seen
'''


def _load_project(directory: Path, monkeypatch):
    """main.py of ``directory``, imported with its dataloaders.py as ``dataloaders``."""
    import importlib.util
    import sys

    modules = {}
    for name in ("dataloaders", "main"):
        spec = importlib.util.spec_from_file_location(f"_outside_users_{name}_{directory.name}", directory / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, name, module)
        spec.loader.exec_module(module)
        modules[name] = module
    return modules["main"]


def test_an_imported_function_returning_an_iterator_converts_and_its_importer_still_works(tmp_path, monkeypatch,
                                                                                          fixture_data):
    root = _project(tmp_path / "repo", {"dataloaders.py": DATALOADERS, "main.py": MAIN})
    r = _cli(root)
    assert r.exit_code == 1 and "dataloaders.py" not in r.stderr, r.output  # (1: a file changed)
    out = (root / "dataloaders.py").read_text()
    assert not _markers(out)
    assert "class HybridTrainPipe" not in out and "def HybridTrainPipe(" in out
    assert "return DaliTorchIterator(pipe, " in out
    assert 'return train_loader, int(ndd.readers.File(' in out  # the epoch size, from the reader
    assert (root / "main.py").read_text() == MAIN
    # the same file as converted where nothing imports it
    assert out == engine.convert_source(DATALOADERS).output

    # main.py gets the same batches, lengths and step count from both (on the CPU)
    torch = pytest.importorskip("torch")
    pytest.importorskip("nvidia.dali.plugin.pytorch")
    ndd = pytest.importorskip("nvidia.dali.experimental.dynamic")
    from dali_migrate.device_cpu import to_cpu

    runs = []
    for name, text in (("original", DATALOADERS), ("converted", out)):
        directory = tmp_path / name
        directory.mkdir()
        (directory / "dataloaders.py").write_text(to_cpu(text))
        (directory / "main.py").write_text(MAIN)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pipeline mode's deprecation warnings
            # (the thread count in force: dynamic mode can hang where a process lowers it)
            runs.append(_load_project(directory, monkeypatch).epochs(str(fixture_data / "images"), ndd.get_num_threads()))
    want, got = runs
    assert sum(isinstance(x[0], torch.Tensor) for x in want) >= 10
    assert len(want) == len(got)
    for x, y in zip(want, got):
        if isinstance(x[0], torch.Tensor):
            assert all(a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b) for a, b in zip(x, y))
        else:
            assert x == y
    assert ("steps", 2, 2) in want  # 21 images, batches of 8


@pytest.mark.parametrize("main", [
    # builds and runs a pipeline of the file
    ("def main(root):\n    pipe = train_pipe(root)\n    pipe.build()\n    for _ in range(2):\n"
     "        images, labels = pipe.run()\n        print(images.as_cpu().at(0).shape)\n"),
    # a `with pipe:` graph of its own
    ("def main(root):\n    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)\n    with pipe:\n"
     "        jpegs, labels = fn.readers.file(file_root=root)\n        pipe.set_outputs(fn.decoders.image(jpegs), labels)\n"
     "    pipe.build()\n    print(pipe.run())\n"),
    # calls a function of the file that runs one: main() itself does not change
    "def run(root):\n    pipe = train_pipe(root)\n    pipe.build()\n    print(pipe.run())\n\n\ndef main(root):\n    run(root)\n",
], ids=["runs-a-pipeline", "with-graph", "calls-a-runner"])
def test_an_imported_main_that_returns_nothing_converts(tmp_path, main):
    pipes = PIPES.replace("import pipeline_def, fn", "import Pipeline, pipeline_def, fn") + "\n\n" + main
    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/pipes.py": pipes,
                               "train.py": "import sys\n\nfrom pkg.pipes import main\n\nmain(sys.argv[1])\n"})
    r = _convert(root / "pkg" / "pipes.py")
    out = (root / "pkg" / "pipes.py").read_text()
    assert (r.status, r.pipelines_left) == (Status.CONVERTED, 0) and r.pipelines_converted >= 1
    assert not _markers(out) and "def main(root):" in out
    assert out == engine.convert_source(pipes).output


_LOADER = "    return DALIGenericIterator(train_pipe(root), [\"images\", \"labels\"], reader_name=\"Reader\")\n"


@pytest.mark.parametrize("get", [
    # the image classification example's closure: `get_dali_train_loader(dali_cpu)(data_path, ...)`
    ("def get(dali_cpu=False):\n    def make(root, batch_size):\n        pipe = train_pipe(root)\n        pipe.build()\n"
     "        loader = DALIGenericIterator(pipe, [\"images\", \"labels\"], reader_name=\"Reader\")\n"
     "        return loader, int(pipe.epoch_size(\"Reader\") / batch_size)\n\n    return make\n"),
    # the loader in a class of the file (DeepGlint ALIP's DALIWarper)
    ("class Wrapper:\n    def __init__(self, it):\n        self.it = it\n\n    def __iter__(self):\n"
     "        for data in self.it:\n            yield data[0][\"images\"]\n\n\ndef get(root):\n"
     "    return Wrapper(DALIGenericIterator(train_pipe(root), [\"images\", \"labels\"], reader_name=\"Reader\"))\n"),
    # what another such function of the file returns
    "def make(root):\n" + _LOADER + "\n\ndef get(root, dali=True):\n    if dali:\n        return make(root)\n    return None\n",
    # the epoch sizes of every reader: a dict of ints either way
    "def get(root):\n    pipe = train_pipe(root)\n    pipe.build()\n    return {\"sizes\": pipe.epoch_size()}\n",
], ids=["a-closure", "a-wrapper-class", "another-such-function", "epoch-sizes"])
def test_an_imported_function_returning_what_its_caller_still_can_use_converts(tmp_path, get):
    pipes = PIPES.replace("    jpegs, labels = fn.readers.file(file_root=root)",
                          "    jpegs, labels = fn.readers.file(file_root=root, name=\"Reader\")")
    pipes = pipes.replace("from nvidia.dali import pipeline_def, fn\n",
                          "from nvidia.dali import pipeline_def, fn\nfrom nvidia.dali.plugin.pytorch import DALIGenericIterator\n")
    pipes += "\n\n" + get
    root = _project(tmp_path, {"pipes.py": pipes, "train.py": "from pipes import get\n"})
    r = _convert(root / "pipes.py")
    out = (root / "pipes.py").read_text()
    assert (r.pipelines_converted, r.pipelines_left) == (1, 0) and not _markers(out)
    assert out == engine.convert_source(pipes).output


def test_an_imported_function_keeps_the_helpers_of_its_pipeline_no_longer(tmp_path):
    # kept for an importer, the helper would stay, in pipeline mode and unused
    pipes = textwrap.dedent('''\
        from nvidia.dali import pipeline_def, fn
        from nvidia.dali.plugin.pytorch import DALIGenericIterator


        def augment(images):
            return fn.flip(images, horizontal=1)


        @pipeline_def(batch_size=2, num_threads=1, device_id=None)
        def train_pipe(root):
            jpegs, labels = fn.readers.file(file_root=root, name="Reader")
            return augment(fn.decoders.image(jpegs)), labels


        def get_loader(root):
            return DALIGenericIterator(train_pipe(root), ["images", "labels"], reader_name="Reader")
    ''')
    root = _project(tmp_path, {"pipes.py": pipes, "train.py": "from pipes import get_loader\n"})
    _convert(root / "pipes.py")
    out = (root / "pipes.py").read_text()
    assert "def augment" not in out and "ndd.flip(" in out and not _markers(out)


_RUNS = "    pipe = train_pipe(root)\n    pipe.build()\n"


@pytest.mark.parametrize("get", [
    "def get(root):\n" + _RUNS + "    return pipe\n",
    "def get(root):\n    return train_pipe(root)\n",
    "def get(root):\n" + _RUNS + "    return pipe.run()\n",
    "def get(root):\n" + _RUNS + "    images, labels = pipe.run()\n    return images, 2\n",
    "def get(root):\n" + _RUNS + "    outputs = pipe.run()\n    return len(outputs[0])\n",
    "def get(root):\n" + _RUNS + "    found = {}\n    found['images'] = pipe.run()[0]\n    return found\n",
    "def get(root, store):\n" + _RUNS + "    store.outputs = pipe.run()\n",
    "def get(root, store):\n" + _RUNS + "    store.append(pipe.run())\n",
    "LAST = None\n\n\ndef get(root):\n    global LAST\n" + _RUNS + "    LAST = pipe.run()\n",
    "def get(root):\n" + _RUNS + "    while True:\n        yield pipe.run()\n",
    "def make(root):\n" + _RUNS + "    return pipe\n\n\ndef get(root):\n    return make(root)\n",
], ids=["the-pipeline", "a-call-of-it", "its-outputs", "one-output", "a-value-made-from-them", "a-dict-holding-one",
        "stored-on-a-parameter", "appended-to-a-parameter", "a-global", "yielded", "what-a-factory-returns"])
def test_an_imported_function_giving_its_caller_a_pipeline_or_its_outputs_keeps_it(tmp_path, get):
    pipes = PIPES + "\n\n" + get
    assert engine.convert_source(pipes).pipelines_converted == 1  # converted where nothing imports it
    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/pipes.py": pipes, "train.py": "from pkg.pipes import get\n"})
    r = _convert(root / "pkg" / "pipes.py")
    out = (root / "pkg" / "pipes.py").read_text()
    assert _without_markers(out) == pipes and r.pipelines_left == 1
    pipe_marker, kept_marker = _markers(out)
    assert pipe_marker.startswith("# dali-migrate: [pipeline-def] pipeline not converted: `get`, which converting it "
                                  "would change, is imported by train.py:1")
    assert kept_marker.startswith("# dali-migrate: [imported-elsewhere] kept as it is: imported by train.py:1")


def test_an_imported_function_whose_parameter_gets_pipeline_functions_keeps_them(tmp_path):
    # converted, benchmark() would call what it gets to make a generator: its importer passes a
    # pipeline-mode pipeline function
    pipes = PIPES + textwrap.dedent('''

        def benchmark(pipeline_fn, iterations):
            pipe = pipeline_fn("x")
            pipe.build()
            for _ in range(iterations):
                pipe.run()


        def main():
            benchmark(train_pipe, 3)
    ''')
    assert engine.convert_source(pipes).pipelines_converted == 1
    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/pipes.py": pipes,
                               "bench.py": "from pkg.pipes import benchmark\n"})
    r = _convert(root / "pkg" / "pipes.py")
    out = (root / "pkg" / "pipes.py").read_text()
    assert _without_markers(out) == pipes and r.pipelines_left == 1
    assert "pipeline not converted: `benchmark`, which converting it would change" in _markers(out)[0]


def test_a_changed_signature_keeps_an_imported_function():
    # No conversion changes the header of a function that is not a pipeline today: the check
    # guards against one that would (the importer calls it as written).
    import libcst as cst

    from dali_migrate import imported_elsewhere, parents

    before = cst.parse_module("def get(root, n=1):\n    return root\n").body[0]
    for after_text, same in [("def get(root, n=1):\n    return 0\n", True), ("def get(root, n=2):\n    return root\n", False),
                             ("@cache\ndef get(root, n=1):\n    return root\n", False),
                             ("async def get(root, n=1):\n    return root\n", False)]:
        module = cst.parse_module(after_text)
        changes = imported_elsewhere._Changes(parents.build(module), {}, {})
        assert imported_elsewhere._same_signature(before, module.body[0], changes) is same, after_text


# -- the CLI --------------------------------------------------------------------------------------


def _cli(*args, jobs="1"):
    return CliRunner().invoke(main, ["convert", "--jobs", jobs, *map(str, args)])


def _repository(tmp_path: Path) -> Path:
    # more files that mention DALI than runner._POOL_THRESHOLD, so that --jobs 2 uses worker processes
    files = {"pkg/__init__.py": "", "pkg/pipes.py": PIPES, "train.py": TRAIN, "pkg/free.py": PIPES.replace("train_pipe", "free_pipe")}
    files.update({f"notes/n{i}.py": "# about nvidia.dali\nx = 1\n" for i in range(5)})
    return _project(tmp_path, files)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_cli_over_the_repository(tmp_path, jobs):
    root = _repository(tmp_path)
    r = _cli(root, jobs=jobs)
    assert r.exit_code == 1, r.output
    pipes = (root / "pkg" / "pipes.py").read_text()
    assert _without_markers(pipes) == PIPES and "imported by train.py:3" in pipes
    assert "def free_pipe(root, *, batch_size=2" in (root / "pkg" / "free.py").read_text()
    assert f"{root / 'pkg' / 'pipes.py'}:4: [pipeline-def] pipeline not converted: imported by train.py:3" in r.stderr


def test_cli_given_only_the_defining_file_still_finds_its_importers(tmp_path):
    # pre-commit passes only the files a commit changes
    root = _repository(tmp_path)
    r = _cli(root / "pkg" / "pipes.py")
    assert r.exit_code == 1, r.output
    assert _without_markers((root / "pkg" / "pipes.py").read_text()) == PIPES
    assert "imported by train.py:3" in (root / "pkg" / "pipes.py").read_text()


def test_cli_check_and_diff_write_nothing(tmp_path):
    root = _repository(tmp_path)
    r = _cli("--diff", root)
    assert "+# dali-migrate: [pipeline-def] pipeline not converted: imported by train.py:3" in r.stdout
    assert "-@pipeline_def" not in r.stdout.split(f"--- {root / 'pkg' / 'pipes.py'}")[1].split("--- ")[0]
    assert _cli("--check", root).exit_code == 1
    assert (root / "pkg" / "pipes.py").read_text() == PIPES


def test_a_second_run_changes_nothing_and_keeps_asking_for_a_person(tmp_path):
    root = _repository(tmp_path)
    _cli(root)
    first = (root / "pkg" / "pipes.py").read_text()
    outside_users._projects.clear()
    r = _cli("--check", root)
    assert r.exit_code == 1  # the marker needs a person
    assert (root / "pkg" / "pipes.py").read_text() == first


def test_the_marker_follows_the_importer(tmp_path):
    root = _repository(tmp_path)
    _cli(root / "pkg" / "pipes.py")
    (root / "train.py").write_text("import os\n" + TRAIN)  # the import moves down a line
    outside_users._projects.clear()
    _cli(root / "pkg" / "pipes.py")
    [marker] = _markers((root / "pkg" / "pipes.py").read_text())
    assert "imported by train.py:4 " in marker
    (root / "train.py").unlink()  # nothing imports it any more: it converts
    outside_users._projects.clear()
    _cli(root / "pkg" / "pipes.py")
    out = (root / "pkg" / "pipes.py").read_text()
    assert not _markers(out) and "def train_pipe(root, *, batch_size=2" in out


def test_importers_the_walk_skips_do_not_count(tmp_path):
    files = {"pkg/__init__.py": "", "pkg/pipes.py": PIPES, ".gitignore": "build/\n",
             "build/train.py": TRAIN, "venv/lib/train.py": TRAIN, "venv/pyvenv.cfg": ""}
    root = _project(tmp_path, files)
    r = _convert(root / "pkg" / "pipes.py")
    assert r.pipelines_converted == 1 and not r.markers


# -- the project root ----------------------------------------------------------------------------


@pytest.mark.parametrize("marker", [".git", "pyproject.toml", "setup.py", "setup.cfg"])
def test_root_is_the_nearest_marked_ancestor(tmp_path, marker):
    root = _project(tmp_path / "repo", {"src/pkg/pipes.py": PIPES}, marker=marker)
    (tmp_path / "pyproject.toml").write_text("")  # farther up: not this one
    assert outside_users.project_root(root / "src" / "pkg" / "pipes.py") == str(root)


def test_without_a_marked_ancestor_the_root_is_the_directory_given(tmp_path):
    base = tmp_path / "plain"
    (base / "src").mkdir(parents=True)
    f = base / "src" / "pipes.py"
    f.write_text(PIPES)
    beside = os.path.join(str(base / "src"), "")  # the file's own directory, its subfolders left out
    if outside_users.project_root(f) != beside:
        pytest.skip("the temporary directory has a marked ancestor")
    assert outside_users.project_root(f, outside_users.Scope(tops=(str(base),))) == str(base)
    assert outside_users.project_root(f, outside_users.Scope(tops=(str(f),))) == beside
    assert outside_users.project_root(f, outside_users.Scope(root=str(tmp_path))) == str(tmp_path)


def test_a_file_given_alone_in_an_unmarked_directory_reads_the_files_beside_it_only(tmp_path):
    # a script in a home or temp directory: the thousands of files below it are no project of its
    base = tmp_path / "plain"
    (base / "deep" / "er").mkdir(parents=True)
    f = base / "pipes.py"
    f.write_text(PIPES)
    (base / "beside.py").write_text("from pipes import x\n")
    (base / "deep" / "er" / "below.py").write_text("from pipes import x\n")
    root = outside_users.project_root(f)
    if root != os.path.join(str(base), ""):
        pytest.skip("the temporary directory has a marked ancestor")
    outside_users._projects.pop(root, None)
    read = [rel for _, rel, _ in outside_users.project(root)._load()]
    assert read == ["beside.py", "pipes.py"]
    # given as a directory, the walk (and the project) takes in the folders under it
    top = outside_users.project_root(f, outside_users.Scope(tops=(str(base),)))
    outside_users._projects.pop(top, None)
    assert "deep/er/below.py" in [rel for _, rel, _ in outside_users.project(top)._load()]


# -- cost ---------------------------------------------------------------------------------------------


def test_no_project_scan_for_files_that_change_no_definition(tmp_path, monkeypatch):
    def no_walk(*args, **kwargs):
        raise AssertionError("the project was read")

    monkeypatch.setattr(walk, "find_files", no_walk)
    root = _project(tmp_path, {"a.py": "import os\n", "b.py": "# nvidia.dali, but nothing to convert\nx = 1\n",
                               "c.py": "from nvidia.dali import fn\n\n\ndef f(x):\n    return fn.flip(x)\n"})
    for name in ("a.py", "b.py", "c.py"):
        assert _convert(root / name).error is None


def test_the_project_is_read_once_per_process(tmp_path, monkeypatch):
    calls = []
    real = walk.find_files
    monkeypatch.setattr(walk, "find_files", lambda *a, **k: calls.append(a) or real(*a, **k))
    files = {"pkg/__init__.py": "", "pkg/pipes.py": PIPES, "pkg/more.py": PIPES.replace("train_pipe", "more_pipe"),
             "train.py": TRAIN}
    root = _project(tmp_path, files)
    _convert(root / "pkg" / "pipes.py")
    _convert(root / "pkg" / "more.py")
    assert len(calls) == 1
    assert "def more_pipe(root, *" in (root / "pkg" / "more.py").read_text()


def test_changed_names_follow_what_uses_a_changed_definition():
    before = "def p():\n    pass\n\nq = p()\nr = 1\nimport os, sys\n# note\n"
    after = "def p():\n    return 1\n\nq = p()\nr = 1  # dali-migrate: comment only\nimport os\n# other\n"
    assert outside_users.changed_names(before, after) == {"p", "q", "sys"}


def test_both_readings_of_module_level_bindings_agree():
    # the runner decides what to ask about (ast), the engine what to keep (libcst): the same names
    import ast

    import libcst as cst

    from dali_migrate import imported_elsewhere

    source = textwrap.dedent('''\
        import os.path, numpy as np
        from nvidia.dali import fn as f, types
        from .x import *
        a, (b, *c) = 1, (2, 3)
        d: int = 4
        e += 1
        def g(): h = 1
        async def i(): pass
        class J: k = 1
        try:
            from l import m
        except ImportError:
            m = None
        finally:
            n = 1
        if a:
            o = 1
        elif b:
            p = 1
        else:
            q = 1
        for r in []:
            s = 1
        with open(a) as (t, u):
            v = 1
        while False:
            w = 1
        if __name__ == "__main__":
            z = 1
    ''')
    by_ast = [set(outside_users.bindings(s)) for s in ast.parse(source).body]
    by_cst = [imported_elsewhere.bindings(s) for s in cst.parse_module(source).body]
    assert by_ast == by_cst
    assert set().union(*by_ast) == set("abcdegimnopqrstuvw") | {"J", "os", "np", "f", "types"}


def test_a_marker_in_the_wording_of_earlier_versions_is_dropped_and_written_again(tmp_path):
    # (before pipelines converted with their importers' uses the reason said "only in the file that
    # defines it"): a run must recognise it as its own, not leave it beside the new one
    old = ("# dali-migrate: [pipeline-def] pipeline not converted: imported by train.py:3 (`from pkg.pipes "
           "import train_pipe`), where dali-migrate does not convert its uses (it converts a pipeline's uses "
           "only in the file that defines it): converted here, it would break that code. Keep it as it is, "
           "or convert it and its uses there together by hand\n")
    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/pipes.py": PIPES.replace("@pipeline_def", old + "@pipeline_def", 1),
                               "train.py": TRAIN})
    _convert(root / "pkg" / "pipes.py")
    out = (root / "pkg" / "pipes.py").read_text()
    [marker] = _markers(out)
    assert "cannot convert its uses with it" in marker
    assert _without_markers(out) == PIPES


# ColossalAI's benchmarks: `build_data()` defines a class derived from DALI's iterator that makes
# its own pipeline, and returns its loaders; `vit_builder()`, which another file imports, returns
# build_data itself. Converted, the class keeps the iterator's surface (the emitted class is its base).
OWN_LOADER = '''\
from nvidia.dali import fn
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin.pytorch import DALIClassificationIterator


def build_data(root):
    class Loader(DALIClassificationIterator):
        def __init__(self, root, batch_size=4):
            pipe = Pipeline(batch_size=batch_size, num_threads=2, device_id=None)
            with pipe:
                jpegs, labels = fn.readers.file(file_root=root, name="Reader")
                pipe.set_outputs(jpegs, labels)
            pipe.build()
            super().__init__(pipe, reader_name="Reader", auto_reset=True)

        def __next__(self):
            return super().__next__()[0]["data"]

    return Loader(root), Loader(root, batch_size=2)


def builder():
    return build_data
'''


def test_an_imported_function_returning_a_function_that_makes_iterator_classes_converts(tmp_path):
    root = _project(tmp_path, {"vit.py": OWN_LOADER, "run.py": "from vit import builder\n\nbuild_data = builder()\n"})
    r = _convert(root / "vit.py")
    out = (root / "vit.py").read_text()
    assert (r.pipelines_converted, r.pipelines_left) == (1, 0) and not _markers(out), out
    assert "class Loader(DaliTorchIterator):" in out
    assert out == engine.convert_source(OWN_LOADER).output


@pytest.mark.parametrize("extra, held", [
    ("            self.first = pipe.run()\n", True),  # its outputs, where the loader's user sees them
    ("            self.steps = pipe.epoch_size(\"Reader\") // batch_size\n", False),  # an int either way
], ids=["its-outputs-on-self", "its-epoch-size-on-self"])
def test_an_iterator_class_that_gives_more_than_the_iterator_keeps_it_for_the_importer(tmp_path, extra, held):
    source = OWN_LOADER.replace("            pipe.build()\n", "            pipe.build()\n" + extra)
    assert engine.convert_source(source).pipelines_converted == 1  # converted where nothing imports it
    root = _project(tmp_path, {"vit.py": source, "run.py": "from vit import builder\n"})
    r = _convert(root / "vit.py")
    out = (root / "vit.py").read_text()
    if held:
        assert r.pipelines_converted == 0 and "class Loader(DALIClassificationIterator):" in out
        assert any("is imported by run.py:1" in m for m in _markers(out)), out
    else:
        assert r.pipelines_converted == 1 and not _markers(out), out
