"""A pipeline runs its own code when it is made; the converted code runs it then too.

MKFMIKU/RAW2RGBNet's loader shuffles its file list with Python's `random` in a Pipeline
subclass's __init__. Made in one order and first used in another, each pipeline keeps the shuffle
it got when it was made: the converted code must give each the same batches (a generator
function would shuffle at the first next(), in the order of use)."""

import pytest
from _modules import load_source

pytest.importorskip("nvidia.dali")

from dali_migrate.engine import convert_source  # noqa: E402

SOURCE = '''\
import random

import numpy as np
import nvidia.dali.ops as ops
from nvidia.dali.pipeline import Pipeline


class ShuffledFeed(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, n):
        super().__init__(batch_size, num_threads, device_id, seed=1)
        order = list(range(n))
        random.shuffle(order)
        self.order = iter(order * 100)
        self.input = ops.ExternalSource()

    def define_graph(self):
        self.data = self.input()
        return self.data

    def iter_setup(self):
        self.feed_input(self.data, [np.array([next(self.order)]) for _ in range(self.batch_size)])


def first_batches():
    random.seed(0)
    train = ShuffledFeed(4, 1, None, 10)
    val = ShuffledFeed(4, 1, None, 10)
    val.build()
    train.build()
    v = [int(x[0]) for x in np.array(val.run()[0].as_tensor())]  # val used first
    t = [int(x[0]) for x in np.array(train.run()[0].as_tensor())]
    return t, v
'''


def test_each_pipeline_keeps_the_shuffle_it_was_made_with(tmp_path):
    result = convert_source(SOURCE)
    assert not result.markers, result.output
    assert "def batches():" in result.output
    want = load_source(tmp_path, "original", SOURCE).first_batches()
    got = load_source(tmp_path, "converted", result.output).first_batches()
    assert want == got
    assert want[0] != want[1]  # the two shuffles differ: the order they are made in matters


def test_an_error_in_the_pipelines_own_code_comes_when_it_is_made():
    source = SOURCE.replace("        order = list(range(n))\n", "        if n < 1:\n            raise ValueError('n')\n        order = list(range(n))\n")
    result = convert_source(source)
    assert not result.markers, result.output
    namespace: dict = {}
    exec(compile(result.output, "<converted>", "exec"), namespace)  # noqa: S102 - code converted here
    with pytest.raises(ValueError):
        namespace["ShuffledFeed"](4, 1, None, 0)  # not at next(): made, as Pipeline.__init__ raised


SOURCE_MADE_IN_GRAPH = '''\
import random

import numpy as np
from nvidia.dali import fn, pipeline_def


class ShuffledFiles:
    """DALI's ExternalInputIterator example: the file list is shuffled when the source is made."""

    def __init__(self, batch_size, n):
        self.batch_size = batch_size
        self.order = list(range(n))
        random.shuffle(self.order)

    def __iter__(self):
        self.i = 0
        return self

    def __next__(self):
        batch = [np.array([self.order[(self.i + k) % len(self.order)]]) for k in range(self.batch_size)]
        self.i += self.batch_size
        return batch


@pipeline_def(batch_size=4, num_threads=1, device_id=None)
def shuffled_pipe(n):
    return fn.external_source(source=ShuffledFiles(4, n))


def first_batches():
    random.seed(0)
    train = shuffled_pipe(10)
    val = shuffled_pipe(10)
    val.build()
    train.build()
    v = [int(x[0]) for x in np.array(val.run()[0].as_tensor())]  # val used first
    t = [int(x[0]) for x in np.array(train.run()[0].as_tensor())]
    return t, v
'''


def test_a_source_made_in_the_graph_is_made_with_the_pipeline(tmp_path):
    # DALI evaluates source=ShuffledFiles(...) when it defines the graph, on the pipeline's call
    result = convert_source(SOURCE_MADE_IN_GRAPH)
    assert not result.markers, result.output
    assert "def batches():" in result.output
    want = load_source(tmp_path, "original", SOURCE_MADE_IN_GRAPH).first_batches()
    got = load_source(tmp_path, "converted", result.output).first_batches()
    assert want == got
    assert want[0] != want[1]


def _shapes_both_ways(tmp_path, source: str, converted: str, data) -> tuple:
    """``shapes(cfg, later)`` of the original and of the converted code, each with a fresh
    ``cfg`` (size 8) that ``later`` changes (size 40) after the pipeline is made."""
    import types

    def later(cfg):
        cfg.size = 40

    def cfg():
        return types.SimpleNamespace(size=8, root=str(data / "images"))

    want = load_source(tmp_path, "original", source).shapes(cfg(), later)
    got = load_source(tmp_path, "converted", converted).shapes(cfg(), later)
    return want, got


def test_what_the_pipeline_reads_of_an_argument_is_read_when_it_is_made(tmp_path, fixture_data):
    # `batch_size = cfg.bs` of the pipeline's own code: the caller may change `cfg` between
    # making the pipeline and its first batch (code in another module); the pipeline had read it
    source = '''\
import nvidia.dali.fn as fn
from nvidia.dali import pipeline_def


@pipeline_def(num_threads=1, device_id=None)
def pipe(cfg):
    size = cfg.size
    jpegs, labels = fn.readers.file(file_root=cfg.root)
    return fn.resize(fn.decoders.image(jpegs), resize_x=size, resize_y=size), labels


def shapes(cfg, later):
    p = pipe(cfg, batch_size=2)
    p.build()
    later(cfg)
    images, _ = p.run()
    return [images.at(i).shape for i in range(2)]
'''
    result = convert_source(source)
    assert not result.markers, result.output
    assert "def batches():" in result.output
    want, got = _shapes_both_ways(tmp_path, source, result.output, fixture_data)
    assert want == got == [(8, 8, 3)] * 2


def test_an_argument_s_attribute_an_operator_reads_is_read_when_the_pipeline_is_made(tmp_path, fixture_data):
    # `fn.resize(..., resize_x=cfg.size)` read cfg.size when the pipeline was built; the converted
    # loop reads the value taken then, not cfg.size again every iteration
    source = '''\
import nvidia.dali.fn as fn
from nvidia.dali import pipeline_def


@pipeline_def(num_threads=1, device_id=None)
def pipe(cfg):
    jpegs, labels = fn.readers.file(file_root=cfg.root)
    return fn.resize(fn.decoders.image(jpegs), resize_x=cfg.size, resize_y=cfg.size), labels


def shapes(cfg, later):
    p = pipe(cfg, batch_size=2)
    p.build()
    first, _ = p.run()
    later(cfg)
    second, _ = p.run()
    return [first.at(i).shape for i in range(2)] + [second.at(i).shape for i in range(2)]
'''
    result = convert_source(source)
    assert not result.markers, result.output
    # (one name for both reads of cfg.size: the pipeline's code changed nothing in between)
    assert "size = cfg.size\n" in result.output and "resize_x=size, resize_y=size" in result.output
    want, got = _shapes_both_ways(tmp_path, source, result.output, fixture_data)
    assert want == got == [(8, 8, 3)] * 4


def test_what_an_if_of_the_pipeline_reads_of_an_argument_is_read_when_it_is_made(tmp_path, fixture_data):
    # `if cfg.size > 16:` and what its branch reads ran once, when the pipeline was built: the
    # converted code reads both once too, under the same `if`, and a caller changing `cfg`
    # afterwards (to make another pipeline) does not switch the loop to the other branch
    source = '''\
import nvidia.dali.fn as fn
from nvidia.dali import pipeline_def


@pipeline_def(num_threads=1, device_id=None)
def pipe(cfg):
    jpegs, labels = fn.readers.file(file_root=cfg.root)
    images = fn.decoders.image(jpegs)
    if cfg.size > 16:
        images = fn.resize(images, resize_x=cfg.size // 2, resize_y=cfg.size // 2)
    elif cfg.size > 4:
        images = fn.resize(images, resize_x=cfg.size, resize_y=cfg.size)
    else:
        images = fn.resize(images, resize_x=4, resize_y=4)
    return images, labels


def shapes(cfg, later):
    p = pipe(cfg, batch_size=2)
    p.build()
    first, _ = p.run()
    later(cfg)
    second, _ = p.run()
    return [first.at(i).shape for i in range(2)] + [second.at(i).shape for i in range(2)]
'''
    result = convert_source(source)
    assert not result.markers, result.output
    loop = result.output.split("def batches():")[1].split("return batches()")[0]
    assert "if size > 16:" in loop and "cfg" not in loop, result.output
    want, got = _shapes_both_ways(tmp_path, source, result.output, fixture_data)
    assert want == got == [(8, 8, 3)] * 4
