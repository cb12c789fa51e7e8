"""PyTorch DALIGenericIterator / DALIClassificationIterator: the converted code gives the same epochs.

Each case is a small program (a file reader pipeline and a function that iterates the iterator for
three epochs) in pipeline mode. It is converted with the codemod, both versions are moved onto the
CPU (``device_cpu.to_cpu``) and run; every batch of every epoch (torch tensors: dtype, shape,
values), every ``len(loader)`` and every StopIteration must match. Policies FILL / DROP / PARTIAL,
padded and unpadded readers, ``reader_name=`` and ``size=``, ``auto_reset``, ``reset()`` after
``len()`` batches, and ``prepare_first_batch=False`` are covered.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
import warnings

import pytest

from dali_migrate.device_cpu import to_cpu
from dali_migrate.engine import convert_source
from dali_migrate.emitted_torch_iterator import DaliTorchIterator

torch = pytest.importorskip("torch")
pytest.importorskip("nvidia.dali.plugin.pytorch")
ndd = pytest.importorskip("nvidia.dali.experimental.dynamic")

SOURCE = '''\
from nvidia.dali import fn, pipeline_def
from nvidia.dali.plugin.pytorch import {iterator}, LastBatchPolicy


@pipeline_def(batch_size={bs}, num_threads={threads}, device_id=0)
def pipe_fn(root):
    jpegs, labels = fn.readers.file(file_root=root, name="Reader", pad_last_batch={pad})
    images = fn.decoders.image(jpegs, device="mixed")
    images = fn.resize(images, resize_x=8, resize_y=8)
    return images, labels.gpu()


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
            seen.append((data[0]["data"], data[0]["label"]))"""
LEN_LOOP = """for _ in range(len(loader)):
            data = next(loader)
            seen.append((data[0]["data"], data[0]["label"]))
        loader.reset()"""
NEXT_LOOP = """while True:
            try:
                data = next(loader)
            except StopIteration:
                seen.append("stop")
                break
            seen.append((data[0]["data"], data[0]["label"]))
        loader.reset()"""


def _cases():
    out = []
    for policy, pad, bs in itertools.product(["FILL", "DROP", "PARTIAL"], [False, True], [4, 8]):
        pol = f"last_batch_policy=LastBatchPolicy.{policy}"
        out.append((f"generic-reader-{policy}-pad{pad}-bs{bs}", "DALIGenericIterator",
                    f'[pipe], ["data", "label"], reader_name="Reader", {pol}', pad, bs, FOR_LOOP))
    for policy in ["FILL", "DROP", "PARTIAL"]:
        pol = f"last_batch_policy=LastBatchPolicy.{policy}"
        out.append((f"generic-size-{policy}", "DALIGenericIterator",
                    f'pipe, ["data", "label"], size=21, {pol}', False, 4, FOR_LOOP))
        out.append((f"classification-auto-{policy}", "DALIClassificationIterator",
                    f'pipe, reader_name="Reader", auto_reset=True, {pol}', False, 8, FOR_LOOP))
        out.append((f"generic-len-reset-{policy}", "DALIGenericIterator",
                    f'[pipe], ["data", "label"], reader_name="Reader", {pol}, prepare_first_batch=False', False, 4, LEN_LOOP))
        out.append((f"generic-next-{policy}", "DALIGenericIterator",
                    f'[pipe], ["data", "label"], reader_name="Reader", {pol}', True, 8, NEXT_LOOP))
    # a policy computed where the iterator is made: its member's name goes to the emitted class
    for chosen in ("DROP", "PARTIAL"):
        pol = f"last_batch_policy=LastBatchPolicy.{chosen} if n > 1 else LastBatchPolicy.FILL"
        out.append((f"generic-computed-{chosen}", "DALIGenericIterator",
                    f'[pipe], ["data", "label"], reader_name="Reader", {pol}', False, 8, FOR_LOOP))
    return out


CASES = _cases()


def _load(tmp_path, name, source):
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"_torch_it_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _both(tmp_path, tag: str, source: str, output: str, cpu: bool = True):
    """The original program and its conversion, loaded as modules (moved onto the CPU first, unless
    ``cpu`` is False)."""
    move = to_cpu if cpu else (lambda text: text)
    suffix = f"_{tag}" if tag else ""
    return _load(tmp_path, f"original{suffix}", move(source)), _load(tmp_path, f"converted{suffix}", move(output))


def _same(a, b):
    assert len(a) == len(b), (len(a), len(b))
    for i, (x, y) in enumerate(zip(a, b)):
        if isinstance(x, tuple) and isinstance(x[0], torch.Tensor):
            for tx, ty in zip(x, y):
                assert tx.dtype == ty.dtype and tx.shape == ty.shape, (i, tx.dtype, ty.dtype, tx.shape, ty.shape)
                assert torch.equal(tx, ty), i
        else:
            assert x == y, (i, x, y)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_iterator_epochs_match(case, tmp_path, fixture_data):
    name, iterator, args, pad, bs, loop = case
    source = SOURCE.format(iterator=iterator, args=args, pad=pad, bs=bs, loop=loop, threads=ndd.get_num_threads())
    result = convert_source(source)
    assert not result.markers, result.output
    assert "DaliTorchIterator(" in result.output and f"{iterator}(" not in result.output
    if "-computed-" in name:
        assert "last_batch_policy=(LastBatchPolicy." in result.output and ").name)" in result.output
    original, converted = _both(tmp_path, "", source, result.output)
    root = str(fixture_data / "images")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = original.epochs(root, 3)
    got = converted.epochs(root, 3)
    assert sum(isinstance(x, tuple) and isinstance(x[0], torch.Tensor) for x in want) >= 6
    _same(want, got)


MULTI_SOURCE = '''\
from nvidia.dali import fn, pipeline_def
from nvidia.dali.plugin.pytorch import {iterator}, LastBatchPolicy


@pipeline_def(batch_size={bs}, num_threads={threads}, device_id=0)
def pipe_fn(root, shard_id, num_shards):
    jpegs, labels = fn.readers.file(
        file_root=root, shard_id=shard_id, num_shards=num_shards, name="Reader", pad_last_batch={pad}, stick_to_shard={stick}
    )
    images = fn.decoders.image(jpegs, device="mixed")
    images = fn.resize(images, resize_x=8, resize_y=8)
    return images, labels.gpu()


def epochs(root, n):
    {make}
    loader = {iterator}({args})
    seen = []
    for _ in range(n):
        {loop}
        seen.append(("len", len(loader)))
    return seen
'''

# Two pipelines held by variables, or a comprehension's list of them (DALI's multi-GPU examples).
MAKE_TWO = """pipe0 = pipe_fn(root, 0, 2, device_id=0)
    pipe1 = pipe_fn(root, 1, 2, device_id=1)
    pipe0.build()
    pipe1.build()"""
MAKE_LIST = """pipes = [pipe_fn(root, i, 2, device_id=i) for i in range(2)]
    pipes[0].build()"""
TWO, LIST = "[pipe0, pipe1]", "pipes"

MULTI_FOR = """for data in loader:
            seen.append(("gpus", len(data)))
            seen.extend((d["data"], d["label"]) for d in data)"""
MULTI_NEXT = """while True:
            try:
                data = next(loader)
            except StopIteration:
                seen.append("stop")
                break
            seen.append(("gpus", len(data)))
            seen.extend((d["data"], d["label"]) for d in data)
        loader.reset()"""
MULTI_LEN = """for _ in range(len(loader)):
            data = next(loader)
            seen.extend((d["data"], d["label"]) for d in data)
        loader.reset()"""


def _multi_cases():
    out = []
    for policy, pad, bs in itertools.product(["FILL", "DROP", "PARTIAL"], [False, True], [4, 8]):
        pol = f"last_batch_policy=LastBatchPolicy.{policy}"
        form = (MAKE_TWO, TWO) if bs == 4 else (MAKE_LIST, LIST)
        out.append((f"multi-reader-{policy}-pad{pad}-bs{bs}", "DALIGenericIterator",
                    f'{form[1]}, ["data", "label"], reader_name="Reader", {pol}', pad, False, bs, form[0], MULTI_FOR))
    for policy in ["FILL", "DROP", "PARTIAL"]:
        pol = f"last_batch_policy=LastBatchPolicy.{policy}"
        # size= as DALI's PyTorch example gives it: the whole data set, all pipelines together
        out.append((f"multi-size-epoch-{policy}", "DALIGenericIterator",
                    f'pipes, ["data", "label"], pipes[0].epoch_size("Reader"), {pol}', False, False, 4, MAKE_LIST, MULTI_FOR))
        out.append((f"multi-size-13-{policy}", "DALIGenericIterator",
                    f'[pipe0, pipe1], ["data", "label"], size=13, {pol}', True, False, 4, MAKE_TWO, MULTI_NEXT))
        out.append((f"multi-classification-auto-{policy}", "DALIClassificationIterator",
                    f'pipes, reader_name="Reader", auto_reset=True, {pol}', False, False, 8, MAKE_LIST, MULTI_FOR))
        out.append((f"multi-next-stick-{policy}", "DALIGenericIterator",
                    f'[pipe0, pipe1], ["data", "label"], reader_name="Reader", {pol}', False, True, 4, MAKE_TWO, MULTI_NEXT))
        out.append((f"multi-len-reset-{policy}", "DALIGenericIterator",
                    f'pipes, ["data", "label"], reader_name="Reader", {pol}, prepare_first_batch=False', True, False, 8, MAKE_LIST, MULTI_LEN))
    return out


MULTI_CASES = _multi_cases()


@pytest.mark.parametrize("case", MULTI_CASES, ids=[c[0] for c in MULTI_CASES])
def test_iterator_over_two_pipelines_matches(case, tmp_path, fixture_data):
    """DALIGenericIterator over two CPU pipelines, each reading its shard of the images (shards
    move on every epoch unless stick_to_shard), against the converted DaliTorchMultiIterator."""
    name, iterator, args, pad, stick, bs, make, loop = case
    source = MULTI_SOURCE.format(iterator=iterator, args=args, pad=pad, stick=stick, bs=bs, make=make, loop=loop,
                                 threads=ndd.get_num_threads())
    result = convert_source(source)
    assert not result.markers, result.output
    assert "DaliTorchMultiIterator(" in result.output and f"{iterator}(" not in result.output
    assert "class DaliTorchIterator" not in result.output
    original, converted = _both(tmp_path, "multi", source, result.output)
    root = str(fixture_data / "images")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = original.epochs(root, 3)
    got = converted.epochs(root, 3)
    assert sum(isinstance(x, tuple) and isinstance(x[0], torch.Tensor) for x in want) >= 6
    _same(want, got)


def test_emitted_class_is_the_copied_source():
    from dali_migrate.rules.torch_iterator import class_source

    text = class_source()
    assert text.startswith("class DaliTorchIterator:")
    # the class needs nothing the converted file lacks: what it imports, a method imports itself
    imports = [line for line in text.splitlines() if line.lstrip().startswith(("import ", "from "))]
    assert imports and all(line.startswith(" " * 12) for line in imports), imports
    assert class_source("DaliTorchIterator_1").startswith("class DaliTorchIterator_1:")
    assert DaliTorchIterator.__name__ == "DaliTorchIterator"


MARKED = {
    "a list with a value that is not a pipeline": ('DALIGenericIterator([pipe, policy], ["data", "label"], reader_name="Reader")', "not a pipeline variable"),
    "one pipeline twice": ('DALIGenericIterator([pipe, pipe], ["data", "label"], reader_name="Reader")', "one pipeline twice"),
    "batch sizes written differently": ('DALIGenericIterator([pipe, pipe3], ["data", "label"], reader_name="Reader")', "batch sizes"),
    "a comprehension with an if": ('DALIGenericIterator([pipe_fn(root) for _ in range(2) if policy], ["data", "label"])', "comprehension"),
    "other reader name": ('DALIGenericIterator([pipe], ["data", "label"], reader_name="Other")', "reader_name"),
    "ragged iterator": ('DALIRaggedIterator([pipe], ["data", "label"], reader_name="Reader")', "DALIRaggedIterator"),
}


@pytest.mark.parametrize("key", sorted(MARKED))
def test_iterators_left_with_a_marker(key):
    call, words = MARKED[key]
    source = (
        "from nvidia.dali import fn, pipeline_def\n"
        "from nvidia.dali.plugin.pytorch import DALIGenericIterator, DALIRaggedIterator, LastBatchPolicy\n\n\n"
        "@pipeline_def(batch_size=4)\n"
        "def pipe_fn(root):\n"
        '    jpegs, labels = fn.readers.file(file_root=root, name="Reader")\n'
        "    return jpegs, labels\n\n\n"
        "def run(root, policy):\n"
        "    pipe = pipe_fn(root)\n"
        "    pipe2 = pipe_fn(root)\n"
        "    pipe3 = pipe_fn(root, batch_size=8)\n"
        f"    loader = {call}\n"
        "    return loader\n"
    )
    result = convert_source(source)
    assert result.output.count("def pipe_fn(root):") == 1 and "@pipeline_def" in result.output
    assert any(words in m.reason for m in result.markers), [m.reason for m in result.markers]


SUBCLASS_SOURCE = '''\
import torch
from nvidia.dali import fn, pipeline_def
from nvidia.dali.plugin.pytorch import {iterator}, LastBatchPolicy


@pipeline_def(batch_size={bs}, num_threads={threads}, device_id=0)
def pipe_fn(root):
    jpegs, labels = fn.readers.file(file_root=root, name="Reader", pad_last_batch={pad})
    images = fn.decoders.image(jpegs, device="mixed")
    images = fn.resize(images, resize_x=8, resize_y=8)
    return images, labels.gpu()


def epochs(root, n):
    pipe = pipe_fn(root)

    class Wrapper({iterator}):
        def __init__(self, *kargs, **kvargs):
            super().__init__(*kargs, **kvargs)
            self.resets = 0
            self._fill_last_batch = False  # a private flag of its own (PyTorch Lightning's example)

        def __next__(self):
            out = super().__next__()
            out = out[0]
            return [out[k] if k != "label" else torch.squeeze(out[k], -1) for k in self.output_map]

        def reset(self):
            self.resets += 1
            super().reset()

        def steps(self):
            # Lightning's example counts an epoch's steps from DALI's _size and _num_gpus
            return self._size // (self._num_gpus * self.batch_size) + (1 if self._fill_last_batch else 0)

    loader = Wrapper({args})
    seen = []
    for _ in range(n):
        {loop}
        seen.append(("len", len(loader), loader.size, loader.resets, loader._counter, loader._size, loader.steps()))
    return seen
'''

SUBCLASS_FOR = """for data in loader:
            seen.append(tuple(data))"""
SUBCLASS_NEXT = """while True:
            try:
                data = loader.next()
            except StopIteration:
                seen.append("stop")
                break
            seen.append(tuple(data))
        loader.reset()"""


def _subclass_cases():
    out = []
    for policy, loop in itertools.product(["FILL", "DROP", "PARTIAL"], [SUBCLASS_FOR, SUBCLASS_NEXT]):
        pol = f"last_batch_policy=LastBatchPolicy.{policy}"
        kind = "for" if loop is SUBCLASS_FOR else "next"
        out.append((f"classification-{policy}-{kind}", "DALIClassificationIterator",
                    f'pipe, reader_name="Reader", {pol}, auto_reset=True', policy == "DROP", 4, loop))
        out.append((f"generic-{policy}-{kind}", "DALIGenericIterator",
                    f'[pipe], ["data", "label"], size=13, {pol}', False, 4, loop))
    return out


SUBCLASS_CASES = _subclass_cases()


@pytest.mark.parametrize("case", SUBCLASS_CASES, ids=[c[0] for c in SUBCLASS_CASES])
def test_iterator_subclass_matches(case, tmp_path, fixture_data):
    """A class derived from DALI's iterator (PyTorch Lightning's example) that reshapes each batch in
    __next__ and counts resets: the converted class, derived from DaliTorchIterator, gets the same
    calls of its overrides (the first batch prepared without them, next() through them)."""
    name, iterator, args, pad, bs, loop = case
    source = SUBCLASS_SOURCE.format(iterator=iterator, args=args, pad=pad, bs=bs, loop=loop, threads=ndd.get_num_threads())
    result = convert_source(source)
    assert not result.markers, result.output
    assert "class Wrapper(DaliTorchIterator):" in result.output and f"import {iterator}" not in result.output
    original, converted = _both(tmp_path, "sub", source, result.output)
    root = str(fixture_data / "images")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = original.epochs(root, 3)
    got = converted.epochs(root, 3)
    assert sum(isinstance(x, tuple) and isinstance(x[0], torch.Tensor) for x in want) >= 6
    assert any(isinstance(x, tuple) and x[0] == "len" and x[3] > 0 for x in want)  # the override was reached
    _same(want, got)


# Pipelines made in one place and handed, as a list, to a class or a function of the file that makes
# the iterator (DALI's RNN-T example): the converted class reads the batch size from the first batches.
HANDED_SOURCE = '''\
from nvidia.dali import fn, pipeline_def
from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy


@pipeline_def(num_threads={threads}, device_id=0)
def pipe_fn(root, shard_id, num_shards):
    jpegs, labels = fn.readers.file(file_root=root, shard_id=shard_id, num_shards=num_shards, pad_last_batch={pad})
    images = fn.decoders.image(jpegs, device="mixed")
    images = fn.resize(images, resize_x=8, resize_y=8)
    return images, labels.gpu()


class Loader:
    def __init__(self, pipelines, size):
        self.it = DALIGenericIterator(pipelines, ["data", "label"], size, {args})


def make_loader(pipelines, size):
    return DALIGenericIterator(pipelines, ["data", "label"], size=size, {args})


def epochs(root, n, batch_size):
    pipes = [pipe_fn(root, i, 2, batch_size=batch_size, device_id=i) for i in range(2)]
    loader = {make}
    seen = [("batch_size", loader.batch_size)]
    for _ in range(n):
        {loop}
        seen.append(("len", len(loader)))
    return seen
'''


def _handed_cases():
    out = []
    for policy in ["FILL", "DROP", "PARTIAL"]:
        pol = f"last_batch_policy=LastBatchPolicy.{policy}"
        out.append((f"class-size-13-{policy}", pol, False, 4, "Loader(pipes, 13).it", MULTI_FOR))
        out.append((f"function-size-21-{policy}", f"{pol}, auto_reset=True", True, 8, "make_loader(pipes, 21)", MULTI_FOR))
        out.append((f"class-next-size-9-{policy}", pol, False, 4, "Loader(pipes, 9).it", MULTI_NEXT))
    return out


HANDED_CASES = _handed_cases()


@pytest.mark.parametrize("case", HANDED_CASES, ids=[c[0] for c in HANDED_CASES])
def test_iterator_over_pipelines_handed_to_a_class_or_function_matches(case, tmp_path, fixture_data):
    """DALIGenericIterator made where the batch size cannot be seen, against the converted
    DaliTorchMultiIterator that reads it from the first batches: the same epochs, len() and batch_size."""
    name, args, pad, bs, make, loop = case
    source = HANDED_SOURCE.format(args=args, pad=pad, make=make, loop=loop, threads=ndd.get_num_threads())
    # only the form the case uses stays: the other would use the class or function a second time
    unused = "class Loader:" if make.startswith("make_loader") else "def make_loader("
    blocks = source.split("\n\n\n")
    source = "\n\n\n".join(b for b in blocks if not b.startswith(unused))
    result = convert_source(source)
    assert not result.markers, result.output
    assert "batch_size=None" in result.output and "DALIGenericIterator(" not in result.output
    original, converted = _both(tmp_path, "handed", source, result.output)
    root = str(fixture_data / "images")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = original.epochs(root, 3, bs)
    got = converted.epochs(root, 3, bs)
    assert want[0] == ("batch_size", bs)
    assert sum(isinstance(x, tuple) and isinstance(x[0], torch.Tensor) for x in want) >= 6
    _same(want, got)


# insightface's arcface loader: a `with pipe:` graph in a function whose reader and iterator take
# the name from the same parameter
WITH_NAME_SOURCE = '''\
from nvidia.dali import fn
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin.pytorch import DALIClassificationIterator, LastBatchPolicy


def loader(root, batch_size, num_threads, name="reader"):
    pipe = Pipeline(batch_size=batch_size, num_threads=num_threads, device_id=0)
    with pipe:
        jpegs, labels = fn.readers.file(file_root=root, name=name, pad_last_batch=True)
        images = fn.resize(fn.decoders.image(jpegs, device="mixed"), resize_x=8, resize_y=8)
        pipe.set_outputs(images, labels.gpu())
    pipe.build()
    return DALIClassificationIterator(pipelines=[pipe], reader_name=name, last_batch_policy=LastBatchPolicy.PARTIAL)


def epochs(root, n):
    it = loader(root, 4, {threads})
    seen = []
    for _ in range(n):
        for data in it:
            seen.append((data[0]["data"], data[0]["label"]))
        seen.append(("len", len(it)))
        it.reset()
    return seen
'''


def _converts_to_the_same_epochs(source, tag, tmp_path, fixture_data, meta="reader_meta=ndd.readers.File("):
    """``source`` converts without markers to an iterator class, and its epochs(root, 2) match."""
    result = convert_source(source)
    assert not result.markers, result.output
    assert "DaliTorchIterator(" in result.output and meta in result.output
    original, converted = _both(tmp_path, f"{tag}", source, result.output)
    root = str(fixture_data / "images")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = original.epochs(root, 2)
    _same(want, converted.epochs(root, 2))


def test_reader_named_by_the_functions_variable(tmp_path, fixture_data):
    _converts_to_the_same_epochs(WITH_NAME_SOURCE.format(threads=ndd.get_num_threads()), "named", tmp_path, fixture_data)


def test_reader_name_variable_bound_again_is_marked():
    source = WITH_NAME_SOURCE.format(threads=2).replace(
        "    pipe.build()\n", "    name = name.upper()\n    pipe.build()\n"
    )
    result = convert_source(source)
    assert any("reader_name" in m.reason for m in result.markers), result.output


# feitreim's loaders: the reader's name is a parameter of the pipeline, given what the iterator
# then gets as reader_name (`name=self.name` ... `reader_name=self.name`)
PARAM_NAME_SOURCE = '''\
from nvidia.dali import fn, pipeline_def
from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy


@pipeline_def(batch_size=4, num_threads={threads}, device_id=0)
def pipe_fn(root, name):
    jpegs, labels = fn.readers.file(file_root=root, name=name)
    images = fn.resize(fn.decoders.image(jpegs, device="mixed"), resize_x=8, resize_y=8)
    return images, labels.gpu()


class Loader:
    def __init__(self, root, shard):
        self.name = f"Reader{{shard}}"
        pipe = pipe_fn(root, name=self.name)
        self.it = DALIGenericIterator(pipe, ["data", "label"], reader_name=self.name,
                                      last_batch_policy=LastBatchPolicy.DROP)


def epochs(root, n):
    it = Loader(root, 0).it
    seen = []
    for _ in range(n):
        for data in it:
            seen.append((data[0]["data"], data[0]["label"]))
        seen.append(("len", len(it)))
        it.reset()
    return seen
'''


def test_reader_named_by_the_argument_the_pipeline_was_made_with(tmp_path, fixture_data):
    source = PARAM_NAME_SOURCE.format(threads=ndd.get_num_threads())
    _converts_to_the_same_epochs(source, "param_named", tmp_path, fixture_data)


def test_reader_name_argument_changed_before_the_iterator_is_marked():
    source = PARAM_NAME_SOURCE.format(threads=2).replace(
        "        self.it = DALIGenericIterator(", "        self.name = 'Other'\n        self.it = DALIGenericIterator("
    )
    result = convert_source(source)
    assert any("reader_name" in m.reason for m in result.markers), result.output


def test_reader_name_none_written_out_is_no_reader_name(tmp_path, fixture_data):
    # blackyyen9596's loader: `reader_name=None` beside size=, the iterator's default spelled out
    source = WITH_NAME_SOURCE.format(threads=ndd.get_num_threads()).replace(
        'name=name, pad_last_batch=True', 'name="Reader", pad_last_batch=True').replace(
        "DALIClassificationIterator(pipelines=[pipe], reader_name=name,",
        'DALIClassificationIterator(pipelines=[pipe], size=pipe.epoch_size("Reader"), reader_name=None,')
    assert "reader_name=None" in source
    result = convert_source(source)
    assert not result.markers, result.output
    assert "reader_name" not in result.output.split("def loader")[1]
    original, converted = _both(tmp_path, "none_name", source, result.output)
    root = str(fixture_data / "images")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = original.epochs(root, 2)
    _same(want, converted.epochs(root, 2))


# the two epochs the tests below compare, for an iterator `it` over the pipeline `pipe`
EPOCHS_OF_IT = '''
    seen = []
    for _ in range(n):
        for data in it:
            seen.append((data[0]["data"], data[0]["label"]))
        seen.append(("len", len(it)))
        it.reset()
    return seen
'''


# aoji0606/Prune's loader: the Pipeline subclass shards by the rank it asks torch.distributed for,
# and the function making the iterator never asks: the reader's metadata asks again
RANK_INSIDE_SOURCE = '''\
import torch
import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin.pytorch import DALIClassificationIterator, LastBatchPolicy


class TrainPipe(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data_dir):
        super().__init__(batch_size, num_threads, device_id, seed=12)
        if torch.distributed.is_initialized():
            rank = torch.distributed.get_rank()
            world_size = torch.distributed.get_world_size()
        else:
            rank = 0
            world_size = 1
        self.input = ops.readers.File(file_root=data_dir, shard_id=rank, num_shards=world_size, pad_last_batch=True)
        self.decode = ops.decoders.Image(device="mixed", output_type=types.RGB)
        self.res = ops.Resize(device="gpu", resize_x=8, resize_y=8)

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        return self.res(self.decode(jpegs)), labels.gpu()


def epochs(root, n):
    pipe = TrainPipe(batch_size=4, num_threads={threads}, device_id=0, data_dir=root)
    pipe.build()
    it = DALIClassificationIterator(pipe, reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL)
''' + EPOCHS_OF_IT


def test_reader_arguments_asked_inside_the_pipeline_are_asked_again(tmp_path, fixture_data):
    source = RANK_INSIDE_SOURCE.format(threads=ndd.get_num_threads())
    assert "torch.distributed.get_rank() if torch.distributed.is_initialized() else 0" in convert_source(source).output
    _converts_to_the_same_epochs(source, "rank_inside", tmp_path, fixture_data)


# deepglint/RWKV-CLIP: a `with pipe:` factory names its reader after its parameter, and the
# iterator names the string the factory was called with
FACTORY_NAME_SOURCE = '''\
import nvidia.dali.fn as fn
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin.pytorch import DALIClassificationIterator, LastBatchPolicy


def create_dali_pipeline(batch_size, data_dir, name):
    pipe = Pipeline(batch_size=batch_size, num_threads={threads}, device_id=0, seed=18)
    with pipe:
        jpegs, labels = fn.readers.file(file_root=data_dir, name=name, pad_last_batch=True)
        images = fn.resize(fn.decoders.image(jpegs, device="mixed"), resize_x=8, resize_y=8)
        pipe.set_outputs(images, labels.gpu())
    pipe.build()
    return pipe


def epochs(root, n):
    pipe = create_dali_pipeline(4, root, name="loader_train")
    it = DALIClassificationIterator(pipe, reader_name="loader_train", last_batch_policy=LastBatchPolicy.PARTIAL)
''' + EPOCHS_OF_IT


def test_reader_named_through_the_factorys_parameter(tmp_path, fixture_data):
    _converts_to_the_same_epochs(FACTORY_NAME_SOURCE.format(threads=ndd.get_num_threads()), "factory_named", tmp_path, fixture_data)


def test_reader_named_through_the_factory_with_another_string_is_marked():
    source = FACTORY_NAME_SOURCE.format(threads=2).replace('reader_name="loader_train"', 'reader_name="other"')
    result = convert_source(source)
    assert any("cannot match the name to the pipeline's reader" in m.reason for m in result.markers), result.output


def test_factory_asking_the_environment_for_its_shard(tmp_path, fixture_data):
    # deepglint's factory reads RANK / WORLD_SIZE itself; the iterator's reader metadata reads them again
    source = FACTORY_NAME_SOURCE.format(threads=ndd.get_num_threads()).replace(
        "import nvidia.dali.fn as fn\n", "import os\n\nimport nvidia.dali.fn as fn\n").replace(
        "    pipe = Pipeline(", '    rank = int(os.environ.get("RANK", "0"))\n'
                              '    world_size = int(os.environ.get("WORLD_SIZE", "1"))\n    pipe = Pipeline(').replace(
        "name=name, pad_last_batch=True", "name=name, shard_id=rank, num_shards=world_size, pad_last_batch=True")
    assert 'shard_id=int(os.environ.get("RANK", "0"))' in convert_source(source).output
    _converts_to_the_same_epochs(source, "factory_environment", tmp_path, fixture_data)


# skadms5355/NIPQ_CiM's loaders: a file list, when given, picks the reader's arguments (here also
# whether it pads); the iterator's epoch comes from the reader the same `if` picks
CHOSEN_READER_SOURCE = '''\
import os

from nvidia.dali import fn, pipeline_def
from nvidia.dali.plugin.pytorch import DALIClassificationIterator, LastBatchPolicy


@pipeline_def(batch_size=3, num_threads={threads}, device_id=0, seed=9)
def pipe_fn(data_dir, file_list=None, shard_id=0, num_shards=2):
    if file_list is not None:
        jpegs, labels = fn.readers.file(file_root=data_dir, file_list=file_list, shard_id=shard_id,
                                        num_shards=num_shards, pad_last_batch=True, name="Reader")
    else:
        jpegs, labels = fn.readers.file(file_root=data_dir, shard_id=shard_id, num_shards=num_shards, name="Reader")
    images = fn.resize(fn.decoders.image(jpegs, device="mixed"), resize_x=8, resize_y=8)
    return images, labels.gpu()


def epochs(root, n):
    file_list = {file_list}
    data_dir = root if file_list is None else os.path.dirname(root)
    pipe = pipe_fn(data_dir, file_list=file_list)
    pipe.build()
    it = DALIClassificationIterator(pipe, reader_name="Reader", last_batch_policy=LastBatchPolicy.{policy})
''' + EPOCHS_OF_IT


@pytest.mark.parametrize("file_list, policy", [
    ("None", "PARTIAL"),
    ('os.path.join(os.path.dirname(root), "images_list.txt")', "PARTIAL"),
    ('os.path.join(os.path.dirname(root), "images_list.txt")', "FILL"),
])
def test_reader_chosen_by_if_gives_the_iterator_its_epoch(file_list, policy, tmp_path, fixture_data):
    source = CHOSEN_READER_SOURCE.format(threads=ndd.get_num_threads(), file_list=file_list, policy=policy)
    out = convert_source(source).output
    assert "reader_meta=(ndd.readers.File(" in out and " if file_list is not None else ndd.readers.File(" in out, out
    _converts_to_the_same_epochs(source, f"chosen_{policy}_{len(file_list)}", tmp_path, fixture_data,
                                 meta="reader_meta=(ndd.readers.File(")


# JaminFong's / Optimize4Training's loaders: one class derived from DALI's iterator serves the
# training and the validation pipelines, each made by its own pipeline function (no random
# operators: the converted code runs on native ndd here, which does not draw a pipeline's numbers)
SUBCLASS_TWO_CALLS_SOURCE = '''\
import torch
from nvidia.dali import fn, pipeline_def
from nvidia.dali.plugin.pytorch import DALIClassificationIterator, LastBatchPolicy


class Loader(DALIClassificationIterator):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)

    def __next__(self):
        out = super().__next__()[0]
        return out["data"], torch.squeeze(out["label"], -1)


@pipeline_def(batch_size=4, num_threads={threads}, device_id=0)
def train_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root, name="Reader")
    images = fn.resize(fn.decoders.image(jpegs, device="mixed"), resize_x=8, resize_y=8)
    return fn.flip(images, horizontal=1), labels.gpu()


@pipeline_def(batch_size=3, num_threads={threads}, device_id=0)
def val_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root, name="Reader")
    return fn.resize(fn.decoders.image(jpegs, device="mixed"), resize_x=8, resize_y=8), labels.gpu()


def epochs(root, n):
    train = Loader(train_pipe(root), reader_name="Reader", last_batch_policy=LastBatchPolicy.DROP, auto_reset=True)
    val = Loader(val_pipe(root), reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL, auto_reset=True)
    seen = []
    for _ in range(n):
        for loader in (train, val):
            for data in loader:
                seen.append(tuple(data))
            seen.append(("len", len(loader)))
    return seen
'''


def test_iterator_subclass_called_for_two_pipelines_matches(tmp_path, fixture_data):
    source = SUBCLASS_TWO_CALLS_SOURCE.format(threads=ndd.get_num_threads())
    result = convert_source(source)
    assert not result.markers, result.output
    assert "class Loader(DaliTorchIterator):" in result.output
    assert result.output.count("Loader(train_pipe(root), [\"data\", \"label\"]") == 1, result.output
    original, converted = _both(tmp_path, "two", source, result.output)
    root = str(fixture_data / "images")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = original.epochs(root, 2)
    _same(want, converted.epochs(root, 2))


def test_iterator_subclass_with_a_call_left_in_pipeline_mode_is_marked():
    # the second call gets a pipeline from a parameter: it stays, so the class's base must stay too
    source = SUBCLASS_TWO_CALLS_SOURCE.format(threads=2).replace(
        "def epochs(root, n):\n",
        "def other(pipe):\n    return Loader(pipe, reader_name=\"Reader\")\n\n\ndef epochs(root, n):\n")
    result = convert_source(source)
    assert "class Loader(DALIClassificationIterator):" in result.output
    assert any("is also called where dali-migrate does not convert the call" in m.reason for m in result.markers), result.output


def test_iterator_subclass_over_pipelines_needing_other_iterators_is_marked():
    # a list of two pipelines needs the multi-pipeline class, the other call the single one
    source = SUBCLASS_TWO_CALLS_SOURCE.format(threads=2).replace(
        "Loader(val_pipe(root),", "Loader([val_pipe(root, device_id=0), val_pipe(root, device_id=1)],")
    result = convert_source(source)
    assert "class Loader(DALIClassificationIterator):" in result.output
    assert result.markers, result.output


# ColossalAI's loaders (hpcaitech): the class derived from DALI's iterator makes its own pipeline in
# __init__ and hands it to super().__init__(); its __iter__ reads DALI's private counters. The
# converted class makes the converted pipeline there and gets the emitted class as its base, whose
# _counter and _size must be DALI's at every step a subclass can see them.
OWN_PIPELINE_SOURCE = '''\
import torch
from nvidia.dali import fn, pipeline_def
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin.pytorch import DALIClassificationIterator, LastBatchPolicy
import nvidia.dali.types as types


class DaliDataloader(DALIClassificationIterator):
    def __init__(self, root, batch_size=4, num_threads={threads}, training=True, cuda=False):
        self.training = training
        pipe = Pipeline(batch_size=batch_size, num_threads=num_threads, device_id=0, seed=1024)
        with pipe:
            jpegs, labels = fn.readers.file(file_root=root, name="Reader", pad_last_batch={pad})
            images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
            images = fn.resize(images, resize_x=8, resize_y=8)
            if cuda:
                pipe.set_outputs(images.gpu(), labels.gpu())
            else:
                pipe.set_outputs(images, labels)
        pipe.build()
        last_batch_policy = {policy}
        super().__init__(pipe, {args}auto_reset=True, last_batch_policy=last_batch_policy)

    def __iter__(self):
        # if not reset (after an epoch), reset; if just initialize, ignore
        if self._counter >= self._size or self._size < 0:
            self.reset()
        return self

    def __next__(self):
        data = super().__next__()
        img, label = data[0]["data"], data[0]["label"]
        return img, label.squeeze(-1)


def epochs(root, n):
    seen = []
    for training in (True, False):
        loader = DaliDataloader(root, batch_size={bs}, training=training)
        seen.append(("made", loader._counter, loader._size, len(loader)))
        for _ in range(n):
            {loop}
            seen.append(("epoch", loader._counter, loader._size, len(loader)))
    return seen
'''

OWN_FOR = """for data in loader:
                seen.append(tuple(data))
                seen.append(("step", loader._counter, loader._size))"""
OWN_NEXT = """while True:
                try:
                    data = next(loader)
                except StopIteration:
                    seen.append(("stop", loader._counter, loader._size))
                    break
                seen.append(tuple(data))
                seen.append(("step", loader._counter, loader._size))
            loader.reset()
            seen.append(("reset", loader._counter, loader._size))"""


def _own_cases():
    out = []
    for policy, loop, pad, where in itertools.product(
        ["LastBatchPolicy.DROP if training else LastBatchPolicy.PARTIAL", "LastBatchPolicy.FILL"],
        [OWN_FOR, OWN_NEXT], [False, True], ["reader", "size"],
    ):
        if where == "size" and pad:
            continue
        args = 'reader_name="Reader", ' if where == "reader" else "size=21, "
        tag = f"{'drop-partial' if 'DROP' in policy else 'fill'}-{'for' if loop is OWN_FOR else 'next'}-pad{pad}-{where}"
        out.append((tag, policy, loop, pad, args))
    return out


OWN_CASES = _own_cases()


@pytest.mark.parametrize("case", OWN_CASES, ids=[c[0] for c in OWN_CASES])
def test_iterator_subclass_making_its_own_pipeline_matches(case, tmp_path, fixture_data):
    name, policy, loop, pad, args = case
    source = OWN_PIPELINE_SOURCE.format(threads=ndd.get_num_threads(), policy=policy, loop=loop, pad=pad, args=args, bs=4)
    result = convert_source(source)
    assert not result.markers, result.output
    assert "class DaliDataloader(DaliTorchIterator):" in result.output, result.output
    assert "super().__init__(pipe, [\"data\", \"label\"], batch_size=batch_size" in result.output, result.output
    assert "DaliDataloader(root, batch_size=4, training=training)" in result.output  # the class's calls keep theirs
    original, converted = _both(tmp_path, f"own_{name}", source, result.output)
    root = str(fixture_data / "images")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = original.epochs(root, 3)
    got = converted.epochs(root, 3)
    assert sum(isinstance(x, tuple) and isinstance(x[0], torch.Tensor) for x in want) >= 6
    _same(want, got)


def test_iterator_subclass_with_a_parameter_of_its_own_matches(tmp_path, fixture_data):
    """timescale-diffusion's LightningWrapper(periodic, *kargs, **kvargs): the class's own argument
    comes first in its calls, the iterator's after it; the converted call keeps it there."""
    source = SUBCLASS_SOURCE.format(
        iterator="DALIClassificationIterator", args='squeeze, pipe, reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL',
        pad=False, bs=4, loop=SUBCLASS_FOR, threads=ndd.get_num_threads(),
    ).replace(
        "        def __init__(self, *kargs, **kvargs):\n            super().__init__(*kargs, **kvargs)\n",
        "        def __init__(self, squeeze, *kargs, **kvargs):\n            super().__init__(*kargs, **kvargs)\n            self.squeeze = squeeze\n",
    ).replace('if k != "label" else', 'if k != "label" or not self.squeeze else').replace(
        "def epochs(root, n):\n", "def epochs(root, n, squeeze=True):\n")
    assert "self.squeeze = squeeze" in source and "Wrapper(squeeze, pipe," in source
    result = convert_source(source)
    assert not result.markers, result.output
    assert "class Wrapper(DaliTorchIterator):" in result.output
    assert 'Wrapper(squeeze, pipe, ["data", "label"], batch_size=4, reader_meta=' in result.output, result.output
    original, converted = _both(tmp_path, "own_param", source, result.output)
    root = str(fixture_data / "images")
    for squeeze in (True, False):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = original.epochs(root, 2, squeeze)
        _same(want, converted.epochs(root, 2, squeeze))


@pytest.mark.gpu
@pytest.mark.parametrize("training", [True, False])
def test_iterator_class_making_its_own_pipeline_on_the_gpu(training, tmp_path, fixture_data):
    """The ColossalAI loader as written for the GPU (mixed decoding, GPU resize, outputs moved with
    .gpu()), converted and run on native ndd: the same batches on the GPU, epoch for epoch, as DALI's
    iterator over the original pipeline, and the same counters."""
    from dali_migrate.runtime._backend import cuda_device_count

    if cuda_device_count() == 0:
        pytest.skip("no CUDA device")
    policy = "LastBatchPolicy.DROP if training else LastBatchPolicy.PARTIAL"
    source = OWN_PIPELINE_SOURCE.format(threads=ndd.get_num_threads(), policy=policy, loop=OWN_NEXT, pad=not training,
                                        args='reader_name="Reader", ', bs=4)
    source = source.replace("images = fn.resize(images, resize_x=8, resize_y=8)",
                            'images = fn.resize(images.gpu(), resize_x=8, resize_y=8, device="gpu")')
    source = source.replace("training=True, cuda=False", "training=True, cuda=True").replace(
        "for training in (True, False):", f"for training in ({training},):")
    result = convert_source(source)
    assert not result.markers, result.output
    original, converted = _both(tmp_path, f"own_gpu_{training}", source, result.output, cpu=False)
    root = str(fixture_data / "images")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = original.epochs(root, 3)
    got = converted.epochs(root, 3)
    batches = [x for x in want if isinstance(x, tuple) and isinstance(x[0], torch.Tensor)]
    assert len(batches) >= 6 and all(t.is_cuda for x in batches for t in x)
    _same(want, got)


MID_EPOCH_RESET = """data = next(loader)
        seen.extend((d["data"], d["label"]) for d in data)
        loader.reset()"""


@pytest.mark.parametrize("multi", [False, True], ids=["one-pipeline", "two-pipelines"])
def test_reset_before_the_epoch_ends_is_ignored_with_dalis_warning(multi, tmp_path, fixture_data, caplog):
    """DALI's iterators ignore reset() before an epoch ends and log a warning saying so; the
    emitted classes keep both (a training loop that resets every epoch logs the same lines)."""
    args = '["data", "label"], reader_name="Reader"'
    if multi:
        source = MULTI_SOURCE.format(iterator="DALIGenericIterator", args=f"{TWO}, {args}", pad=False, stick=False, bs=4,
                                     make=MAKE_TWO, loop=MID_EPOCH_RESET, threads=ndd.get_num_threads())
    else:
        source = SOURCE.format(iterator="DALIGenericIterator", args=f"[pipe], {args}", pad=False, bs=4,
                               loop=MID_EPOCH_RESET, threads=ndd.get_num_threads())
    result = convert_source(source)
    assert not result.markers, result.output
    assert ("DaliTorchMultiIterator(" if multi else "DaliTorchIterator(") in result.output
    original, converted = _both(tmp_path, "multi" if multi else "", source, result.output)
    root = str(fixture_data / "images")
    runs = []
    for module in (original, converted):
        caplog.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            seen = module.epochs(root, 3)
        runs.append((seen, [(r.levelname, r.getMessage()) for r in caplog.records if "resetting" in r.getMessage()]))
    (want, want_log), (got, got_log) = runs
    _same(want, got)
    assert want_log and got_log == want_log
