"""Classes derived from a DALI iterator (iterator_subclasses.py): converted with the iterator call
only where the subclass reaches nothing the two base classes do differently (the conversions
themselves are checked against DALI's iterator in tests/test_torch_iterator.py)."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from dali_migrate import iterator_subclasses
from dali_migrate.engine import convert_source

HEAD = '''\
from nvidia.dali import fn, pipeline_def
from nvidia.dali.plugin.pytorch import DALIClassificationIterator, LastBatchPolicy


@pipeline_def(batch_size=4)
def pipe_fn(root):
    jpegs, labels = fn.readers.file(file_root=root, name="Reader")
    return jpegs, labels


def loader(root):
    pipe = pipe_fn(root)
'''

GOOD = '''\
class Wrapper(DALIClassificationIterator):
    """Lightning wants a list."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.seen = 0

    def __next__(self):
        out = super().__next__()[0]
        self.seen += 1
        return [out[k] for k in self.output_map]

    def steps(self):
        return len(self) * self.batch_size + self.size
'''


def _convert(cls: str, use: str = 'Wrapper(pipe, reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL)'):
    body = textwrap.indent(cls + f"\nreturn {use}\n", "    ")
    return convert_source(HEAD + body)


def test_subclass_gets_the_emitted_class_as_its_base():
    result = _convert(GOOD)
    assert not result.markers, result.output
    assert "    class Wrapper(DaliTorchIterator):" in result.output
    assert 'return Wrapper(pipe, ["data", "label"], batch_size=4, reader_meta=' in result.output
    assert 'last_batch_policy="PARTIAL")' in result.output
    assert "DALIClassificationIterator" not in result.output.split("class DaliTorchIterator")[0]


def test_module_level_subclass_over_a_list_gets_the_multi_class():
    source = (
        "from nvidia.dali import fn, pipeline_def\n"
        "from nvidia.dali.plugin.pytorch import DALIClassificationIterator\n\n\n"
        "@pipeline_def(batch_size=4)\n"
        "def pipe_fn(root, shard_id, num_shards):\n"
        '    jpegs, labels = fn.readers.file(file_root=root, shard_id=shard_id, num_shards=num_shards, name="Reader")\n'
        "    return jpegs, labels\n\n\n"
        + GOOD
        + "\n\ndef loader(root):\n"
        "    pipes = [pipe_fn(root, i, 2, device_id=i) for i in range(2)]\n"
        '    return Wrapper(pipes, reader_name="Reader")\n'
    )
    result = convert_source(source)
    assert not result.markers, result.output
    assert "class Wrapper(DaliTorchMultiIterator):" in result.output
    assert 'return Wrapper(pipes, ["data", "label"], batch_size=4, reader_meta=[' in result.output


MARKED = {
    "private attribute of the base": (GOOD.replace("self.seen += 1", "total = self._shards_num"), None, "uses self._shards_num"),
    "private attribute only the emitted class has": (GOOD.replace("self.seen += 1", "total = self._policy"), None, "uses self._policy"),
    "sets a private counter it may read": (GOOD.replace("self.seen += 1", "self._counter = 0"), None, "sets self._counter"),
    "sets a private attribute DALI's iterator uses": (GOOD.replace("self.seen = 0", "self._last_batch_padded = True"),
                                                      None, "sets self._last_batch_padded"),
    "sets a private attribute the emitted class uses": (GOOD.replace("self.seen = 0", "self._padded = True"),
                                                        None, "sets self._padded"),
    "sets a name-mangled attribute": (GOOD.replace("self.seen = 0", "self.__seen = 0"), None, "sets self.__seen"),
    "sets an attribute of the API": (GOOD.replace("self.seen = 0", "self.batch_size = 2"), None, "sets self.batch_size"),
    "overrides a private method": (GOOD + "\n    def _get_outputs(self):\n        return None\n", None, "defines _get_outputs()"),
    "public attribute only DALI's has": (GOOD.replace("self.seen += 1", "self.checkpoints"), None, "uses self.checkpoints"),
    "constructor with a default of its own": (GOOD.replace("(self, *args, **kwargs)", "(self, tag=None, *args, **kwargs)"),
                                              'Wrapper(1, pipe, reader_name="Reader")', "__init__ takes arguments"),
    "own parameter named as the iterator's": (GOOD.replace("(self, *args, **kwargs)", "(self, size, *args, **kwargs)"),
                                              'Wrapper(3, pipe, reader_name="Reader")', "own parameter `size`"),
    "own argument given by keyword": (GOOD.replace("(self, *args, **kwargs)", "(self, tag, *args, **kwargs)"),
                                      'Wrapper(pipelines=pipe, tag=1, reader_name="Reader")', "not all given first"),
    "constructor changes the arguments": (GOOD.replace("super().__init__(*args, **kwargs)", "super().__init__(*args, size=8, **kwargs)"),
                                          None, "exactly once"),
    "super with arguments": (GOOD.replace("super().__next__()", "super(Wrapper, self).__next__()"), None, "other than"),
    "self handed on": (GOOD.replace("self.seen += 1", "print(self)"), None, "other than to read or set an attribute"),
    "class attribute": (GOOD.replace('"""Lightning wants a list."""', "size = 3"), None, "class-level statements"),
    "decorated method": (GOOD.replace("    def steps", "    @property\n    def steps"), None, "decorated"),
    "base constructor called again": (GOOD.replace("self.seen += 1", "super().__init__()"), None, "outside __init__"),
    "used as a value": (GOOD, 'Wrapper(pipe, reader_name="Reader"), Wrapper', "other than in calls of it"),
    "type check": (GOOD + "\nassert not isinstance(pipe, Wrapper)\n", None, "other than in calls of it"),
}


@pytest.mark.parametrize("key", sorted(MARKED))
def test_subclasses_left_with_a_marker_saying_why(key):
    cls, use, words = MARKED[key]
    result = _convert(cls, use) if use else _convert(cls)
    assert "@pipeline_def" in result.output and "class Wrapper(DALIClassificationIterator):" in result.output
    assert "DaliTorchIterator" not in result.output
    reasons = [m.reason for m in result.markers]
    assert any("class Wrapper (derived from the DALI iterator)" in r and words in r for r in reasons), reasons


def test_private_counters_may_be_read():
    # DALI's _counter and _size, which the emitted class keeps as DALI does (checked step by step
    # against DALI's iterator in tests/test_torch_iterator.py)
    result = _convert(GOOD.replace("self.seen += 1", "self.seen = self._counter < self._size"))
    assert not result.markers, result.output
    assert "    class Wrapper(DaliTorchIterator):" in result.output


def test_private_attributes_of_its_own_may_be_set_and_read():
    # PyTorch Lightning's DALI example: fill_last_batch kept for its own __len__, beside DALI's
    # _size and _num_gpus (the emitted class keeps _num_gpus as DALI does: tests/test_torch_iterator.py)
    cls = GOOD.replace("self.seen = 0", "self._fill_last_batch = True") + (
        "\n    def __len__(self):\n"
        "        batch_count = self._size // (self._num_gpus * self.batch_size)\n"
        "        return batch_count + (1 if self._fill_last_batch else 0)\n"
    )
    result = _convert(cls)
    assert not result.markers, result.output
    assert "    class Wrapper(DaliTorchIterator):" in result.output
    assert "self._fill_last_batch = True" in result.output


def test_dali_private_attributes_cover_the_installed_dali():
    # DALI_PRIVATE is written out so the codemod runs without DALI; a DALI that uses another private
    # attribute in its iterators must be added to it, or a subclass setting it would convert
    plugin = Path(pytest.importorskip("nvidia.dali.plugin.base_iterator").__file__).parent
    files = [plugin / "base_iterator.py", plugin / "pytorch" / "__init__.py", plugin / "paddle.py", *plugin.glob("jax/*.py")]
    used = {n for f in files if f.exists() for n in re.findall(r"\bself\.(_\w+)", f.read_text()) if not n.startswith("__")}
    assert used, files
    assert used <= iterator_subclasses.DALI_PRIVATE, sorted(used - iterator_subclasses.DALI_PRIVATE)


def test_emitted_private_attributes_are_found_in_the_emitted_text():
    names = iterator_subclasses.emitted_private()
    assert {"_policy", "_padded", "_pipe", "_pipes", "_counter", "_num_gpus"} <= names
    # the single-pipeline class keeps _num_gpus, as DALI's does for its one pipeline
    from dali_migrate.rules.torch_iterator import class_source

    assert "self._num_gpus = 1" in class_source()


# ColossalAI's loaders: the class makes its pipeline in __init__ and hands it to super().__init__()
OWN = '''\
from nvidia.dali import fn
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin.pytorch import DALIClassificationIterator, LastBatchPolicy


class Loader(DALIClassificationIterator):
    def __init__(self, root, batch_size=4, training=True):
        self.training = training
        pipe = Pipeline(batch_size=batch_size, num_threads=2, device_id=None)
        with pipe:
            jpegs, labels = fn.readers.file(file_root=root, name="Reader")
            pipe.set_outputs(jpegs, labels)
        pipe.build()
        super().__init__(pipe, reader_name="Reader", auto_reset=True)

    def __iter__(self):
        if self._counter >= self._size or self._size < 0:
            self.reset()
        return self


def loaders(root):
    return Loader(root), Loader(root, batch_size=2, training=False)
'''


def test_class_making_its_own_pipeline_converts_its_super_init():
    result = convert_source(OWN)
    assert not result.markers, result.output
    assert "class Loader(DaliTorchIterator):" in result.output
    assert 'super().__init__(pipe, ["data", "label"], batch_size=batch_size, reader_meta=ndd.readers.File(file_root=root).get_metadata(), auto_reset=True)' in result.output
    assert "return Loader(root), Loader(root, batch_size=2, training=False)" in result.output


OWN_MARKED = {
    "super().__init__ under an if": (
        "        super().__init__(pipe, reader_name=\"Reader\", auto_reset=True)\n",
        "        if training:\n            super().__init__(pipe, reader_name=\"Reader\", auto_reset=True)\n",
        "inside another statement"),
    "super().__init__ twice": (
        "        super().__init__(pipe, reader_name=\"Reader\", auto_reset=True)\n",
        "        super().__init__(pipe, reader_name=\"Reader\", auto_reset=True)\n        super().__init__(pipe, reader_name=\"Reader\")\n",
        "more than once"),
    "sets a private counter": ("            self.reset()\n", "            self._counter = 0\n", "sets self._counter"),
    "subclassed": ("\n\ndef loaders(root):", "\n\nclass Other(Loader):\n    pass\n\n\ndef loaders(root):", "other than in calls of it"),
}


@pytest.mark.parametrize("key", sorted(OWN_MARKED))
def test_class_making_its_own_pipeline_left_with_a_marker_saying_why(key):
    old, new, words = OWN_MARKED[key]
    assert old in OWN
    result = convert_source(OWN.replace(old, new))
    assert "class Loader(DALIClassificationIterator):" in result.output and "DaliTorchIterator" not in result.output
    reasons = [m.reason for m in result.markers]
    assert any("class Loader (derived from the DALI iterator)" in r and words in r for r in reasons), reasons
