"""A loader that chooses its Pipeline subclass through a variable (pipe_choices.ChoiceAlias) and
gives the pipeline to Paddle's DALIGenericIterator, as NVIDIA DeepLearningExamples' Paddle
ResNet-50 does: the converted loader gives the same epochs, for each choice, as the original.

The program is converted with the codemod, both versions are moved onto the CPU
(``device_cpu.to_cpu``) and run, the original with DALI 2.4's Paddle iterator; each loader is made
for both modes and read for three epochs. Compared batch by batch: the structure, each output's
type, dtype, shape, place, LoD and values, every ``len(loader)``. On a CPU build of Paddle the
iterator's CUDA place and stream are replaced as in test_paddle_iterator.py (see there).

Needs Paddle; skipped without it.
"""

from __future__ import annotations

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
import os

import numpy as np
import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin.paddle import DALIGenericIterator, LastBatchPolicy


class HybridPipeBase(Pipeline):
    def __init__(self, file_root, batch_size, device_id, crop, num_threads=4, seed=42, shard_id=0, num_shards=1,
                 random_shuffle=False):
        super().__init__(batch_size, num_threads, device_id, seed=seed)
        self.input = ops.readers.File(file_root=file_root, shard_id=shard_id, num_shards=num_shards,
                                      random_shuffle=random_shuffle)
        self.build_ops(crop)

    def build_ops(self, crop):
        pass


class HybridTrainPipe(HybridPipeBase):
    def build_ops(self, crop):
        self.decode = ops.decoders.Image(device="mixed")
        self.res = ops.Resize(device="gpu", resize_x=crop, resize_y=crop)
        self.to_int64 = ops.Cast(dtype=types.DALIDataType.INT64, device="gpu")

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        return [self.res(self.decode(jpegs)), self.to_int64(labels.gpu())]


class HybridValPipe(HybridPipeBase):
    def build_ops(self, crop):
        self.decode = ops.decoders.Image(device="mixed")
        self.res = ops.Resize(device="gpu", resize_shorter=crop)
        self.cmn = ops.CropMirrorNormalize(device="gpu", crop=(crop, crop), dtype=types.FLOAT, output_layout="CHW")
        self.to_int64 = ops.Cast(dtype=types.DALIDataType.INT64, device="gpu")

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        return [self.cmn(self.res(self.decode(jpegs))), self.to_int64(labels.gpu())]


def dali_dataloader(root, mode, batch_size, shard_id, num_shards):
    pipe_class = None
    if mode == "train":
        file_root = os.path.join(root, "images")
        pipe_class = HybridTrainPipe
    else:
        file_root = os.path.join(root, "images")
        pipe_class = HybridValPipe

    pipe = pipe_class(file_root, batch_size, crop=24, device_id=0, num_threads={threads}, seed=7 + shard_id,
                      shard_id=shard_id, num_shards=num_shards)
    pipe.build()
    return DALIGenericIterator([pipe], ["data", "label"], reader_name="Reader", last_batch_policy=LastBatchPolicy.{policy})


def snap(batches):
    # Taken when the batch is returned: the original's tensors share DALI's buffers.
    return [
        {{name: (type(t), str(t._dtype()), list(t.shape()), str(t._place()), t.lod(), np.array(t)) for name, t in b.items()}}
        for b in batches
    ]


def epochs(root, mode, n):
    loader = dali_dataloader(root, mode, 4, 1, 2)
    seen = []
    for _ in range(n):
        for data in loader:
            seen.append(snap(data))
        seen.append(("len", len(loader)))
    return seen
'''


# DALI's Paddle iterator on a CPU build of Paddle; a source file loaded as a module
from test_paddle_iterator import _load, dali_paddle_on_cpu  # noqa: E402,F401


def _same(want, got):
    assert len(want) == len(got), (len(want), len(got))
    for i, (w, g) in enumerate(zip(want, got)):
        if not isinstance(w, list):
            assert w == g, (i, w, g)
            continue
        assert isinstance(g, list) and len(w) == len(g), (i, g)
        for wb, gb in zip(w, g):
            assert list(wb) == list(gb), (i, list(wb), list(gb))
            for name in wb:
                assert wb[name][:5] == gb[name][:5], (i, name, wb[name][:5], gb[name][:5])
                assert wb[name][5].dtype == gb[name][5].dtype and np.array_equal(wb[name][5], gb[name][5]), (i, name)


@pytest.mark.parametrize("policy", ["FILL", "PARTIAL"])
def test_the_chosen_pipeline_gives_the_same_epochs(policy, tmp_path, fixture_data, dali_paddle_on_cpu):
    source = SOURCE.format(threads=ndd.get_num_threads(), policy=policy)
    result = convert_source(source)
    assert not result.markers, result.output
    assert "class HybridPipeBase" not in result.output and "    pipe = pipe_class(file_root, batch_size, crop=24, device_id=0," in result.output
    original = _load(tmp_path, "original", to_cpu(source))
    converted = _load(tmp_path, "converted", to_cpu(result.output))
    shapes = set()
    for mode in ("train", "val"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = original.epochs(str(fixture_data), mode, 3)
        got = converted.epochs(str(fixture_data), mode, 3)
        assert sum(isinstance(x, list) for x in want) >= 3
        _same(want, got)
        shapes.add(tuple(want[0][0]["data"][2][1:]))
    assert len(shapes) == 2  # the two modes did make different pipelines (HWC 24x24, CHW 24x24)
