"""JAX DALIGenericIterator: the converted code gives the same epochs and the same arrays.

Each case is a small program (a file reader pipeline and a function that iterates the iterator for
three epochs) in pipeline mode. It is converted with the codemod, both versions are moved onto the
CPU (``device_cpu.to_cpu``) and run against DALI's own JAX iterator; every batch of every epoch
(``{name: jax.Array}``: type, dtype, shape, device, sharding, values), every ``len(loader)`` and
every StopIteration must match. Policies FILL / DROP, padded, unpadded and sharded readers,
``reader_name=`` and ``size=``, ``auto_reset``, ``reset()`` after ``len()`` batches,
``prepare_first_batch=False`` and the sharding arguments written as their defaults are covered.

Needs JAX (``pip install "dali-migrate[jax]"``, CPU wheels); skipped without it.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
import warnings

import pytest

from dali_migrate.device_cpu import to_cpu
from dali_migrate.engine import convert_source

pytestmark = pytest.mark.jax
jax = pytest.importorskip("jax")
np = pytest.importorskip("numpy")
pytest.importorskip("nvidia.dali.plugin.jax")
ndd = pytest.importorskip("nvidia.dali.experimental.dynamic")

SOURCE = '''\
import jax
from nvidia.dali import fn, pipeline_def
from nvidia.dali.plugin.base_iterator import LastBatchPolicy
from nvidia.dali.plugin.jax import DALIGenericIterator


@pipeline_def(batch_size={bs}, num_threads={threads}, device_id=0)
def pipe_fn(root):
    jpegs, labels = fn.readers.file(file_root=root, name="Reader", pad_last_batch={pad}{shard})
    images = fn.decoders.image(jpegs, device="mixed")
    images = fn.resize(images, resize_x=8, resize_y=8)
    return images, labels.gpu()


def epochs(root, n):
    pipe = pipe_fn(root)
    loader = DALIGenericIterator({args})
    seen = []
    for _ in range(n):
        {loop}
        seen.append(("len", len(loader)))
    return seen
'''

FOR_LOOP = """for data in loader:
            seen.append((data["data"], data["label"]))"""
LEN_LOOP = """for _ in range(len(loader)):
            data = next(loader)
            seen.append((data["data"], data["label"]))
        loader.reset()"""
NEXT_LOOP = """while True:
            try:
                data = loader.next()
            except StopIteration:
                seen.append("stop")
                break
            seen.append((data["data"], data["label"]))
        loader.reset()"""


def _cases():
    out = []
    for policy, pad, bs in itertools.product(["FILL", "DROP"], [False, True], [4, 8]):
        pol = f"last_batch_policy=LastBatchPolicy.{policy}"
        out.append((f"reader-{policy}-pad{pad}-bs{bs}", f'[pipe], ["data", "label"], reader_name="Reader", {pol}',
                    pad, "", bs, FOR_LOOP))
    for policy in ["FILL", "DROP"]:
        pol = f"last_batch_policy=LastBatchPolicy.{policy}"
        out.append((f"size-{policy}", f'pipe, ["data", "label"], size=21, {pol}', False, "", 4, FOR_LOOP))
        out.append((f"auto-reset-{policy}", f'[pipe], ["data", "label"], reader_name="Reader", auto_reset=True, {pol}',
                    False, "", 8, FOR_LOOP))
        out.append((f"len-reset-{policy}",
                    f'[pipe], ["data", "label"], reader_name="Reader", {pol}, prepare_first_batch=False',
                    False, "", 4, LEN_LOOP))
        out.append((f"next-{policy}", f'[pipe], ["data", "label"], reader_name="Reader", {pol}', True, "", 8, NEXT_LOOP))
        # A shard of three: the reader moves to the next shard each epoch (or sticks to its own).
        for stick in (False, True):
            out.append((f"shard-{policy}-stick{stick}", f'[pipe], ["data", "label"], reader_name="Reader", {pol}',
                        False, f", num_shards=3, shard_id=1, stick_to_shard={stick}", 2, FOR_LOOP))
    out.append(("sharding-defaults", '[pipe], ["data", "label"], reader_name="Reader", sharding=None, pmap_compatible=False',
                False, "", 4, FOR_LOOP))
    out.append(("positional", '[pipe], ["data", "label"], -1, "Reader", False, False, LastBatchPolicy.DROP',
                False, "", 8, FOR_LOOP))
    return out


CASES = _cases()


def _load(tmp_path, name, source):
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"_jax_it_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _same_array(x, y, where):
    assert type(x) is type(y), (where, type(x), type(y))
    assert x.dtype == y.dtype and x.shape == y.shape, (where, x.dtype, y.dtype, x.shape, y.shape)
    assert x.devices() == y.devices() and x.sharding == y.sharding, (where, x.sharding, y.sharding)
    assert np.array_equal(np.asarray(x), np.asarray(y)), where


def _same(a, b):
    assert len(a) == len(b), (len(a), len(b))
    for i, (x, y) in enumerate(zip(a, b)):
        if isinstance(x, tuple) and isinstance(x[0], jax.Array):
            for tx, ty in zip(x, y):
                _same_array(tx, ty, i)
        else:
            assert x == y, (i, x, y)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_iterator_epochs_match(case, tmp_path, fixture_data):
    name, args, pad, shard, bs, loop = case
    source = SOURCE.format(args=args, pad=pad, shard=shard, bs=bs, loop=loop, threads=ndd.get_num_threads())
    result = convert_source(source)
    assert not result.markers, result.output
    assert "DaliJaxIterator(" in result.output and "DALIGenericIterator(" not in result.output
    original = _load(tmp_path, "original", to_cpu(source))
    converted = _load(tmp_path, "converted", to_cpu(result.output))
    root = str(fixture_data / "images")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = original.epochs(root, 3)
    got = converted.epochs(root, 3)
    assert sum(isinstance(x, tuple) and isinstance(x[0], jax.Array) for x in want) >= 6
    _same(want, got)


def test_batch_is_a_dict_of_arrays_like_the_original(tmp_path, fixture_data):
    """One batch, looked at whole: the same keys in the same order, nothing but jax arrays."""
    source = SOURCE.format(args='[pipe], ["data", "label"], reader_name="Reader"', pad=False, shard="", bs=4,
                           loop=FOR_LOOP, threads=ndd.get_num_threads())
    converted = _load(tmp_path, "converted_one", to_cpu(convert_source(source).output))
    original = _load(tmp_path, "original_one", to_cpu(source))
    root = str(fixture_data / "images")
    it_conv = converted.DaliJaxIterator(converted.pipe_fn(root), ["data", "label"], batch_size=4,
                                        reader_meta=ndd.readers.File(file_root=root).get_metadata())
    it_orig = original.DALIGenericIterator([original.pipe_fn(root)], ["data", "label"], reader_name="Reader")
    got, want = next(it_conv), next(it_orig)
    assert type(got) is dict and list(got) == list(want) == ["data", "label"]
    for key in want:
        _same_array(want[key], got[key], key)


MULTI_SOURCE = '''\
import jax
from nvidia.dali import fn, pipeline_def
from nvidia.dali.plugin.base_iterator import LastBatchPolicy
from nvidia.dali.plugin.jax import DALIGenericIterator


@pipeline_def(batch_size={bs}, num_threads={threads})
def pipe_fn(root, num_shards, shard_id):
    jpegs, labels = fn.readers.file(
        file_root=root, name="Reader", num_shards=num_shards, shard_id=shard_id, pad_last_batch={pad}, stick_to_shard={stick}
    )
    images = fn.decoders.image(jpegs, device="mixed")
    images = fn.resize(images, resize_x=8, resize_y=8)
    return images, labels.gpu()


def epochs(root, n):
    {make}
    loader = DALIGenericIterator({args})
    seen = []
    for _ in range(n):
        {loop}
        seen.append(("len", len(loader), loader.size))
    return seen
'''

# The forms DALI's JAX examples make one pipeline per device in: a list comprehension, a loop
# that appends to a list, two variables.
MAKE_COMP = """pipes = [pipe_fn(root, 2, i, device_id=i) for i in range(2)]"""
MAKE_LOOP = """pipes = []
    for i, device in enumerate(["cpu", "cpu"]):
        pipe = pipe_fn(root, num_shards=2, shard_id=i, device_id=i)
        print(f"pipeline {pipe} on device {pipe.device_id}")
        pipes.append(pipe)"""
MAKE_ONE = """pipes = []
    for i, device in enumerate(jax.devices()):
        pipe = pipe_fn(root, num_shards=jax.device_count(), shard_id=i, device_id=i)
        pipes.append(pipe)"""
MAKE_TWO = """pipe0 = pipe_fn(root, 2, 0, device_id=0)
    pipe1 = pipe_fn(root, 2, 1, device_id=1)"""


def _multi_cases():
    out = []
    for policy, (make, pipes), pad in itertools.product(
        ["FILL", "DROP"], [(MAKE_COMP, "pipes"), (MAKE_LOOP, "pipes"), (MAKE_TWO, "[pipe0, pipe1]")], [False, True]
    ):
        form = {MAKE_COMP: "comprehension", MAKE_LOOP: "loop", MAKE_TWO: "two"}[make]
        pol = f"last_batch_policy=LastBatchPolicy.{policy}"
        out.append((f"multi-{form}-{policy}-pad{pad}", make, f'{pipes}, ["data", "label"], reader_name="Reader", {pol}',
                    pad, False, 4, FOR_LOOP))
    for policy in ["FILL", "DROP"]:
        pol = f"last_batch_policy=LastBatchPolicy.{policy}"
        out.append((f"multi-next-stick-{policy}", MAKE_LOOP, f'pipes, ["data", "label"], reader_name="Reader", {pol}',
                    False, True, 2, NEXT_LOOP))
        out.append((f"multi-auto-reset-{policy}", MAKE_COMP,
                    f'pipes, ["data", "label"], reader_name="Reader", auto_reset=True, {pol}', False, False, 4, FOR_LOOP))
        # one device: DALI gives the one pipeline's arrays as they are, no device axis
        out.append((f"multi-one-device-{policy}", MAKE_ONE, f'pipes, ["data", "label"], reader_name="Reader", {pol}',
                    False, False, 4, FOR_LOOP))
    return out


MULTI_CASES = _multi_cases()


@pytest.mark.parametrize("case", MULTI_CASES, ids=[c[0] for c in MULTI_CASES])
def test_iterator_over_several_pipelines_matches(case, tmp_path, fixture_data):
    """JAX DALIGenericIterator over a list of CPU pipelines, each reading its shard (its arrays all
    on the CPU device: DALI stacks them), against the converted DaliJaxMultiIterator."""
    name, make, args, pad, stick, bs, loop = case
    source = MULTI_SOURCE.format(make=make, args=args, pad=pad, stick=stick, bs=bs, loop=loop, threads=ndd.get_num_threads())
    result = convert_source(source)
    assert not result.markers, result.output
    assert "DaliJaxMultiIterator(" in result.output and "DALIGenericIterator(" not in result.output
    original = _load(tmp_path, "original_multi", to_cpu(source))
    converted = _load(tmp_path, "converted_multi", to_cpu(result.output))
    root = str(fixture_data / "images")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = original.epochs(root, 3)
    got = converted.epochs(root, 3)
    assert sum(isinstance(x, tuple) and isinstance(x[0], jax.Array) for x in want) >= 6
    _same(want, got)


NOTEBOOK = '''\
import os

training_data_path = os.path.join(os.environ["DALI_EXTRA_PATH"], "db/MNIST/training/")
validation_data_path = os.path.join(os.environ["DALI_EXTRA_PATH"], "db/MNIST/testing/")

from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn
import nvidia.dali.types as types

batch_size = 3


@pipeline_def(device_id=0, batch_size=batch_size, num_threads={threads})
def mnist_pipeline(data_path, one_hot):
    jpegs, labels = fn.readers.caffe2(path=data_path, name="mnist_caffe2_reader")
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.GRAY)
    images = fn.resize(images, resize_x=28, resize_y=28)  # the fixture's images differ in size
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, std=[255.0], output_layout="CHW")
    images = fn.reshape(images, shape=[-1])
    labels = labels.gpu()
    if one_hot:
        labels = fn.one_hot(labels, num_classes=10)
    return images, labels


training_pipeline = mnist_pipeline(data_path=training_data_path, one_hot=True)
validation_pipeline = mnist_pipeline(data_path=validation_data_path, one_hot=False)
training_pipeline.build()
validation_pipeline.build()
print(training_pipeline)
print(validation_pipeline)

from nvidia.dali.plugin import jax as dax

training_iterator = dax.DALIGenericIterator(
    training_pipeline, output_map=["images", "labels"], reader_name="mnist_caffe2_reader", auto_reset=True)
validation_iterator = dax.DALIGenericIterator(
    validation_pipeline, output_map=["images", "labels"], reader_name="mnist_caffe2_reader", auto_reset=True)
print(training_iterator)
sizes = [training_iterator.size, validation_iterator.size, len(training_iterator)]

from model import init_random_params, update, accuracy

params = init_random_params()
accuracies = []
for epoch in range(3):
    for batch in training_iterator:
        params = update(params, batch)
    accuracies.append(accuracy(params, validation_iterator))
'''

MODEL = '''\
import jax.numpy as jnp

LOG = []


def init_random_params():
    return 0


def update(params, batch):
    LOG.append((batch["images"], batch["labels"]))
    return params + 1


def accuracy(params, iterator):
    correct = 0
    for batch in iterator:
        LOG.append((batch["images"], batch["labels"]))
        correct = correct + jnp.sum(batch["labels"].ravel() % 2 == 0)
    return float(correct / iterator.size), params
'''


def test_notebook_program_matches(tmp_path, fixture_data, monkeypatch):
    """DALI's JAX notebook as a program (its cells joined): the pipelines printed, the iterators'
    sizes read, the validation iterator handed to a function of another module that iterates it
    and divides by ``iterator.size``, that module imported below the cell that makes the iterators.
    Run as it is and converted, every batch both sides give and every result must match."""
    extra = tmp_path / "extra"
    for split in ("training", "testing"):
        (extra / "db" / "MNIST").mkdir(parents=True, exist_ok=True)
        (extra / "db" / "MNIST" / split).symlink_to(fixture_data / "caffe2_lmdb", target_is_directory=True)
    monkeypatch.setenv("DALI_EXTRA_PATH", str(extra))
    (tmp_path / "model.py").write_text(MODEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    source = NOTEBOOK.format(threads=ndd.get_num_threads())
    result = convert_source(source)
    assert not result.markers, result.output
    out = result.output
    assert "print(training_pipeline)" in out and "dax.DALIGenericIterator" not in out
    assert out.index("class DaliJaxIterator") < out.index("training_iterator = DaliJaxIterator(")

    def run(name, text):
        sys.modules.pop("model", None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program = _load(tmp_path, name, to_cpu(text))
        return program, sys.modules["model"].LOG

    want, want_log = run("notebook_original", source)
    got, got_log = run("notebook_converted", out)
    assert want.sizes == got.sizes and want.accuracies == got.accuracies
    assert len(want_log) >= 12
    _same(want_log, got_log)


# A class derived from JAX's iterator that makes its own pipeline and reads DALI's counters, as
# ColossalAI's PyTorch loaders do (tests/test_torch_iterator.py has the PyTorch cases): the
# counters must be DALI's at every step for JAX's iterator too.
OWN_SOURCE = '''\
import jax
from nvidia.dali import fn
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin.base_iterator import LastBatchPolicy
from nvidia.dali.plugin.jax import DALIGenericIterator


class Loader(DALIGenericIterator):
    def __init__(self, root, batch_size):
        pipe = Pipeline(batch_size=batch_size, num_threads={threads}, device_id=0)
        with pipe:
            jpegs, labels = fn.readers.file(file_root=root, name="Reader", num_shards=3, shard_id=1)
            images = fn.decoders.image(jpegs, device="mixed")
            images = fn.resize(images, resize_x=8, resize_y=8)
            pipe.set_outputs(images, labels.gpu())
        pipe.build()
        super().__init__(pipe, ["data", "label"], reader_name="Reader", last_batch_policy=LastBatchPolicy.{policy})

    def __iter__(self):
        if self._counter >= self._size or self._size < 0:
            self.reset()
        return self


def epochs(root, n):
    seen = []
    loader = Loader(root, 2)
    seen.append(("made", loader._counter, loader._size))
    for _ in range(n):
        for data in loader:
            seen.append((data["data"], data["label"]))
            seen.append(("step", loader._counter, loader._size))
        seen.append(("epoch", len(loader), loader._counter, loader._size))
    return seen
'''


@pytest.mark.parametrize("policy", ["FILL", "DROP"])
def test_iterator_class_making_its_own_pipeline_matches(policy, tmp_path, fixture_data):
    source = OWN_SOURCE.format(threads=ndd.get_num_threads(), policy=policy)
    result = convert_source(source)
    assert not result.markers, result.output
    assert "class Loader(DaliJaxIterator):" in result.output
    original = _load(tmp_path, f"original_own_{policy}", to_cpu(source))
    converted = _load(tmp_path, f"converted_own_{policy}", to_cpu(result.output))
    root = str(fixture_data / "images")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = original.epochs(root, 3)
    got = converted.epochs(root, 3)
    assert sum(isinstance(x, tuple) and isinstance(x[0], jax.Array) for x in want) >= 6
    _same(want, got)
