"""The jax-iterator rule without JAX or DALI: the emitted class's text and the calls it leaves to a
person (the conversions themselves are checked against DALI's JAX iterator in
tests/test_jax_iterator.py)."""

from __future__ import annotations

import pytest

from dali_migrate.engine import convert_source


def test_jax_class_is_the_torch_class_with_the_jax_edits():
    from dali_migrate.rules.jax_iterator import edits
    from dali_migrate.rules.torch_iterator import class_source

    class _Site:
        ndd = "dyn"

    text = class_source("DaliJaxIterator", edits(_Site()))
    assert text.startswith("class DaliJaxIterator:")
    assert "jax.dlpack.from_dlpack(dyn.as_tensor(out))" in text and ".torch()" not in text
    assert "PARTIAL\"" not in text and "return [batch]" not in text
    # Outside the edits the two classes are one text: the epoch logic is shared, not copied.
    torch_lines = set(class_source("DaliJaxIterator").splitlines())
    assert len(set(text.splitlines()) - torch_lines) <= 8


def test_jax_multi_class_is_the_torch_multi_class_with_the_jax_edits():
    from dali_migrate.rules.jax_iterator import multi_edits
    from dali_migrate.rules.torch_iterator import MULTI_CLASS_NAME, class_source

    class _Site:
        ndd = "dyn"

    text = class_source("DaliJaxMultiIterator", multi_edits(_Site()), cls=MULTI_CLASS_NAME)
    assert text.startswith("class DaliJaxMultiIterator:")
    assert "jax.dlpack.from_dlpack(dyn.as_tensor(outs[i]))" in text and ".torch()" not in text
    assert "PARTIAL\"" not in text and "return batches" not in text
    assert "DaliJaxMultiIterator.__next__(self)" in text  # the first batch without a subclass's override
    torch_lines = set(class_source("DaliJaxMultiIterator", cls=MULTI_CLASS_NAME).splitlines())
    assert len(set(text.splitlines()) - torch_lines) <= 30


def test_two_pipelines_convert_to_the_multi_class():
    source = (
        "from nvidia.dali import fn, pipeline_def\n"
        "from nvidia.dali.plugin.jax import DALIGenericIterator\n\n\n"
        "@pipeline_def(batch_size=4)\n"
        "def pipe_fn(root, shard_id):\n"
        '    jpegs, labels = fn.readers.file(file_root=root, name="Reader", shard_id=shard_id, num_shards=2)\n'
        "    return jpegs, labels\n\n\n"
        "def run(root):\n"
        "    pipe0 = pipe_fn(root, 0, device_id=0)\n"
        "    pipe1 = pipe_fn(root, 1, device_id=1)\n"
        '    return DALIGenericIterator([pipe0, pipe1], ["data", "label"], reader_name="Reader")\n'
    )
    result = convert_source(source)
    assert not result.markers, result.output
    assert "class DaliJaxMultiIterator:" in result.output and "class DaliJaxIterator:" not in result.output
    assert 'return DaliJaxMultiIterator([pipe0, pipe1], ["data", "label"], batch_size=4, reader_meta=[' in result.output


def test_an_edit_that_no_longer_matches_fails_loudly():
    from dali_migrate.rules.torch_iterator import class_source

    with pytest.raises(AssertionError, match="not one"):
        class_source("X", (("text the class does not hold", ""),))


MARKED = {
    "one pipeline twice": ('DALIGenericIterator([pipe, pipe], ["data", "label"], reader_name="Reader")', "one pipeline twice"),
    "several pipelines with sharding": ('DALIGenericIterator([pipe, pipe2], ["data", "label"], reader_name="Reader", sharding=sharding)',
                                        "jax.make_array_from_single_device_arrays"),
    "partial": ('DALIGenericIterator([pipe], ["data", "label"], reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL)',
                "does not support PARTIAL"),
    "sharding": ('DALIGenericIterator([pipe], ["data", "label"], reader_name="Reader", sharding=sharding)',
                 "jax.make_array_from_single_device_arrays"),
    "pmap": ('DALIGenericIterator([pipe], ["data", "label"], reader_name="Reader", pmap_compatible=True)', "leading device axis"),
    "fill_last_batch": ('DALIGenericIterator([pipe], ["data", "label"], reader_name="Reader", fill_last_batch=False)',
                        "fill_last_batch="),
    "policy variable": ('DALIGenericIterator([pipe], ["data", "label"], reader_name="Reader", last_batch_policy=policy)',
                        "last_batch_policy"),
    "other reader name": ('DALIGenericIterator([pipe], ["data", "label"], reader_name="Other")', "reader_name"),
}


@pytest.mark.parametrize("key", sorted(MARKED))
def test_iterators_left_with_a_marker(key):
    call, words = MARKED[key]
    source = (
        "from nvidia.dali import fn, pipeline_def\n"
        "from nvidia.dali.plugin.base_iterator import LastBatchPolicy\n"
        "from nvidia.dali.plugin.jax import DALIGenericIterator\n\n\n"
        "@pipeline_def(batch_size=4)\n"
        "def pipe_fn(root):\n"
        '    jpegs, labels = fn.readers.file(file_root=root, name="Reader")\n'
        "    return jpegs, labels\n\n\n"
        "def run(root, policy, sharding):\n"
        "    pipe = pipe_fn(root)\n"
        "    pipe2 = pipe_fn(root)\n"
        f"    loader = {call}\n"
        "    return loader\n"
    )
    result = convert_source(source)
    assert result.output.count("def pipe_fn(root):") == 1 and "@pipeline_def" in result.output
    assert "DaliJaxIterator" not in result.output
    assert any(words in m.reason for m in result.markers), [m.reason for m in result.markers]


def test_torch_and_jax_iterators_in_one_file_get_one_class_each():
    source = (
        "from nvidia.dali import fn, pipeline_def\n"
        "from nvidia.dali.plugin import jax as dax\n"
        "from nvidia.dali.plugin.pytorch import DALIGenericIterator\n\n\n"
        "@pipeline_def(batch_size=4)\n"
        "def pipe_fn(root):\n"
        '    jpegs, labels = fn.readers.file(file_root=root, name="Reader")\n'
        "    return jpegs, labels\n\n\n"
        "def run(root):\n"
        "    p1 = pipe_fn(root)\n"
        "    p2 = pipe_fn(root)\n"
        '    a = dax.DALIGenericIterator(p1, ["x", "y"], reader_name="Reader")\n'
        '    b = DALIGenericIterator([p2], ["x", "y"], reader_name="Reader")\n'
        "    return a, b\n"
    )
    out = convert_source(source).output
    assert out.count("class DaliJaxIterator:") == 1 and out.count("class DaliTorchIterator:") == 1
    assert 'a = DaliJaxIterator(p1, ["x", "y"], batch_size=4' in out and 'b = DaliTorchIterator(p2, ["x", "y"], batch_size=4' in out
    assert "# dali-migrate" not in out
