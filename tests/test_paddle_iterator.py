"""Paddle DALIGenericIterator / DALIClassificationIterator: the converted code gives the same epochs
and the same Paddle tensors as DALI's own Paddle iterator.

Each case is a small program (a file reader pipeline, or two sharded ones, and a function that
iterates the iterator for three epochs) in pipeline mode. It is converted with the codemod, both
versions are moved onto the CPU (``device_cpu.to_cpu``) and run: the original with DALI 2.4's
``nvidia.dali.plugin.paddle`` iterator, the converted one with the emitted ``DaliPaddleIterator`` /
``DaliPaddleMultiIterator``. Compared, batch by batch, right when each batch is returned: the
structure (a list with one dict per pipeline, its keys), each output's type (Paddle's core
``DenseTensor``), dtype, shape, place, LoD and values; every ``len(loader)``; every StopIteration.
Policies FILL / DROP / PARTIAL, padded, unpadded and sharded readers, ``reader_name=`` and
``size=``, ``auto_reset``, ``reset()`` after ``len()`` batches, ``prepare_first_batch=False``,
``(name, 0)`` pairs in ``output_map`` and DALIClassificationIterator are covered.

What is not compared: GPU outputs. The PyPI Paddle is a CPU build, and DALI's Paddle iterator makes
a ``CUDAPlace`` for the pipeline's device and asks for Paddle's current CUDA stream on every batch,
which a CPU build refuses; on such a build the test replaces those two (``paddle.CUDAPlace`` and
``paddle.device.cuda.current_stream``) with stand-ins. Over CPU pipelines the original never uses
the place, and the stand-in stream (None) is what a CPU tensor's ``__dlpack__`` gets. The GPU path
(the stream handed to ``__dlpack__``, the place of a GPU output) is therefore not run here.

Needs Paddle (``pip install "dali-migrate[paddle]"``, CPU wheels); skipped without it.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
import types as pytypes
import warnings

import pytest

from dali_migrate.device_cpu import to_cpu
from dali_migrate.engine import convert_source

pytestmark = pytest.mark.paddle
np = pytest.importorskip("numpy")
paddle = pytest.importorskip("paddle")
pytest.importorskip("nvidia.dali.plugin.paddle")
ndd = pytest.importorskip("nvidia.dali.experimental.dynamic")

SOURCE = '''\
import numpy as np
from nvidia.dali import fn, pipeline_def
from nvidia.dali.plugin.paddle import {iterator}, LastBatchPolicy


@pipeline_def(batch_size={bs}, num_threads={threads}, device_id=0)
def pipe_fn(root):
    jpegs, labels = fn.readers.file(file_root=root, name="Reader", pad_last_batch={pad}{shard})
    images = fn.decoders.image(jpegs, device="mixed")
    images = fn.resize(images, resize_x=8, resize_y=8)
    return images, labels.gpu()


def snap(batches):
    # Taken when the batch is returned: the original's tensors share DALI's buffers.
    return [
        {{name: (type(t), str(t._dtype()), list(t.shape()), str(t._place()), t.lod(), np.array(t)) for name, t in b.items()}}
        for b in batches
    ]


def epochs(root, n):
    pipe = pipe_fn(root)
    loader = {iterator}({args})
    seen = []
    for _ in range(n):
        {loop}
        seen.append(("len", len(loader)))
    return seen
'''

FOR_LOOP = """for data in loader:
            seen.append(snap(data))"""
LEN_LOOP = """for _ in range(len(loader)):
            data = next(loader)
            seen.append(snap(data))
        loader.reset()"""
NEXT_LOOP = """while True:
            try:
                data = loader.next()
            except StopIteration:
                seen.append("stop")
                break
            seen.append(snap(data))
        loader.reset()"""


def _cases():
    out = []
    for policy, pad, bs in itertools.product(["FILL", "DROP", "PARTIAL"], [False, True], [4, 8]):
        pol = f"last_batch_policy=LastBatchPolicy.{policy}"
        out.append((f"generic-reader-{policy}-pad{pad}-bs{bs}", "DALIGenericIterator",
                    f'[pipe], ["data", "label"], reader_name="Reader", {pol}', pad, "", bs, FOR_LOOP))
    for policy in ["FILL", "DROP", "PARTIAL"]:
        pol = f"last_batch_policy=LastBatchPolicy.{policy}"
        out.append((f"generic-size-{policy}", "DALIGenericIterator",
                    f'pipe, ["data", "label"], size=21, {pol}', False, "", 4, FOR_LOOP))
        out.append((f"classification-auto-{policy}", "DALIClassificationIterator",
                    f'pipe, reader_name="Reader", auto_reset=True, {pol}', False, "", 8, FOR_LOOP))
        out.append((f"generic-len-reset-{policy}", "DALIGenericIterator",
                    f'[pipe], ["data", "label"], reader_name="Reader", {pol}, prepare_first_batch=False',
                    False, "", 4, LEN_LOOP))
        out.append((f"generic-next-{policy}", "DALIGenericIterator",
                    f'[pipe], [("data", 0), "label"], reader_name="Reader", {pol}', True, "", 8, NEXT_LOOP))
        # A shard of three: the reader moves to the next shard each epoch (or sticks to its own).
        for stick in (False, True):
            out.append((f"shard-{policy}-stick{stick}", "DALIGenericIterator",
                        f'[pipe], ["data", "label"], reader_name="Reader", {pol}', False,
                        f", num_shards=3, shard_id=1, stick_to_shard={stick}", 2, FOR_LOOP))
    return out


CASES = _cases()

MULTI_SOURCE = '''\
import numpy as np
from nvidia.dali import fn, pipeline_def
from nvidia.dali.plugin.paddle import {iterator}, LastBatchPolicy


@pipeline_def(batch_size={bs}, num_threads={threads}, device_id=0)
def pipe_fn(root, shard_id, num_shards):
    jpegs, labels = fn.readers.file(
        file_root=root, shard_id=shard_id, num_shards=num_shards, name="Reader", pad_last_batch={pad}, stick_to_shard={stick}
    )
    images = fn.decoders.image(jpegs, device="mixed")
    images = fn.resize(images, resize_x=8, resize_y=8)
    return images, labels.gpu()


def snap(batches):
    return [
        {{name: (type(t), str(t._dtype()), list(t.shape()), str(t._place()), t.lod(), np.array(t)) for name, t in b.items()}}
        for b in batches
    ]


def epochs(root, n):
    {make}
    loader = {iterator}({args})
    seen = []
    for _ in range(n):
        {loop}
        seen.append(("len", len(loader)))
    return seen
'''

# Two pipelines held by variables, or a comprehension's list of them (the docs' multi-GPU examples).
MAKE_TWO = """pipe0 = pipe_fn(root, 0, 2, device_id=0)
    pipe1 = pipe_fn(root, 1, 2, device_id=1)
    pipe0.build()
    pipe1.build()"""
MAKE_LIST = """pipes = [pipe_fn(root, i, 2, device_id=i) for i in range(2)]"""
TWO, LIST = "[pipe0, pipe1]", "pipes"


def _multi_cases():
    out = []
    for policy, pad in itertools.product(["FILL", "DROP", "PARTIAL"], [False, True]):
        pol = f"last_batch_policy=LastBatchPolicy.{policy}"
        make, pipes = (MAKE_TWO, TWO) if pad else (MAKE_LIST, LIST)
        out.append((f"multi-reader-{policy}-pad{pad}", "DALIGenericIterator",
                    f'{pipes}, ["data", "label"], reader_name="Reader", {pol}', pad, False, 4, make, FOR_LOOP))
    for policy in ["FILL", "DROP", "PARTIAL"]:
        pol = f"last_batch_policy=LastBatchPolicy.{policy}"
        out.append((f"multi-size-13-{policy}", "DALIGenericIterator",
                    f'[pipe0, pipe1], ["data", "label"], size=13, {pol}', True, False, 4, MAKE_TWO, NEXT_LOOP))
        out.append((f"multi-classification-stick-{policy}", "DALIClassificationIterator",
                    f'pipes, reader_name="Reader", auto_reset=True, {pol}', False, True, 8, MAKE_LIST, FOR_LOOP))
    return out


MULTI_CASES = _multi_cases()


@pytest.fixture
def dali_paddle_on_cpu(monkeypatch):
    """DALI's Paddle iterator on a CPU build of Paddle (see the module docstring)."""
    if not paddle.is_compiled_with_cuda():
        monkeypatch.setattr(paddle, "CUDAPlace", lambda device_id: None)
        monkeypatch.setattr(paddle.device.cuda, "current_stream", lambda device_id=None: pytypes.SimpleNamespace(cuda_stream=None))


def _load(tmp_path, name, source):
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"_paddle_it_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _same(want, got):
    assert len(want) == len(got), (len(want), len(got))
    for i, (w, g) in enumerate(zip(want, got)):
        if not isinstance(w, list):
            assert w == g, (i, w, g)
            continue
        assert isinstance(g, list) and len(w) == len(g), (i, g)
        for b, (wb, gb) in enumerate(zip(w, g)):
            assert list(wb) == list(gb), (i, b, list(wb), list(gb))
            for name in wb:
                wt, gt = wb[name], gb[name]
                assert wt[:5] == gt[:5], (i, b, name, wt[:5], gt[:5])
                assert wt[5].dtype == gt[5].dtype and np.array_equal(wt[5], gt[5]), (i, b, name)


def _run(tmp_path, fixture_data, source, cls):
    result = convert_source(source)
    assert not result.markers, result.output
    assert f"{cls}(" in result.output and "nvidia.dali.plugin.paddle" not in result.output
    original = _load(tmp_path, "original", to_cpu(source))
    converted = _load(tmp_path, "converted", to_cpu(result.output))
    root = str(fixture_data / "images")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = original.epochs(root, 3)
    got = converted.epochs(root, 3)
    assert sum(isinstance(x, list) for x in want) >= 3  # a batch in each epoch at least
    assert all(t[0] is paddle.base.libpaddle.DenseTensor for x in want if isinstance(x, list) for b in x for t in b.values())
    _same(want, got)
    return want


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_iterator_epochs_match(case, tmp_path, fixture_data, dali_paddle_on_cpu):
    name, iterator, args, pad, shard, bs, loop = case
    source = SOURCE.format(iterator=iterator, args=args, pad=pad, shard=shard, bs=bs, loop=loop, threads=ndd.get_num_threads())
    want = _run(tmp_path, fixture_data, source, "DaliPaddleIterator")
    if "PARTIAL" in name and not shard:
        # The cut batch is the original's own copy (lod_tensor_clip): check that a case reached it.
        assert any(isinstance(x, list) and x[0]["label"][2][0] < bs for x in want)


@pytest.mark.parametrize("case", MULTI_CASES, ids=[c[0] for c in MULTI_CASES])
def test_iterator_over_two_pipelines_matches(case, tmp_path, fixture_data, dali_paddle_on_cpu):
    name, iterator, args, pad, stick, bs, make, loop = case
    source = MULTI_SOURCE.format(iterator=iterator, args=args, pad=pad, stick=stick, bs=bs, make=make, loop=loop,
                                 threads=ndd.get_num_threads())
    result = convert_source(source)
    assert "class DaliPaddleIterator" not in result.output
    _run(tmp_path, fixture_data, source, "DaliPaddleMultiIterator")
