"""The paddle-iterator rule without Paddle or DALI: the emitted classes' text, the rewritten calls and
the calls it leaves to a person (the conversions themselves are checked against DALI's Paddle
iterator in tests/test_paddle_iterator.py)."""

from __future__ import annotations

import pytest

from dali_migrate.engine import convert_source


class _Site:
    ndd = "dyn"


def test_paddle_classes_are_the_torch_classes_with_the_paddle_edits():
    from dali_migrate.rules.paddle_iterator import edits, multi_edits
    from dali_migrate.rules.torch_iterator import MULTI_CLASS_NAME, class_source

    for name, cls, changes in (("DaliPaddleIterator", "DaliTorchIterator", edits),
                               ("DaliPaddleMultiIterator", MULTI_CLASS_NAME, multi_edits)):
        text = class_source(name, changes(_Site()), cls=cls)
        assert text.startswith(f"class {name}:")
        assert "paddle.framework.core.from_dlpack(capsule)" in text and "dyn.as_tensor(out)" in text
        assert ".torch()" not in text and "t[0:" not in text and "torch.Tensor" not in text
        # Outside the edits the classes are the torch ones: the epoch logic is shared, not copied.
        torch_lines = set(class_source(name, cls=cls).splitlines())
        assert len(set(text.splitlines()) - torch_lines) <= 32


def test_a_lod_level_in_an_output_map_the_tool_cannot_see_fails_when_the_class_is_made():
    from dali_migrate.rules.paddle_iterator import edits
    from dali_migrate.rules.torch_iterator import class_source

    namespace = {}
    exec(class_source("DaliPaddleIterator", edits(_Site())), namespace)  # noqa: S102 - our own emitted class
    cls = namespace["DaliPaddleIterator"]
    with pytest.raises(NotImplementedError, match="LoD level"):
        cls(iter(()), ["data", ("label", 1)], batch_size=2)
    loader = cls(iter(()), [("data", 0), "label"], batch_size=2, prepare_first_batch=False)
    assert loader.output_map == ["data", "label"]


_SOURCE = (
    "from nvidia.dali import fn, pipeline_def\n"
    "from nvidia.dali.plugin.paddle import DALIGenericIterator, DALIClassificationIterator, LastBatchPolicy\n\n\n"
    "@pipeline_def(batch_size=4)\n"
    "def pipe_fn(root):\n"
    '    jpegs, labels = fn.readers.file(file_root=root, name="Reader")\n'
    "    return jpegs, labels\n\n\n"
    "def run(root, policy, output_map):\n"
    "    pipe = pipe_fn(root)\n"
    "    pipe2 = pipe_fn(root)\n"
    "    loader = {call}\n"
    "    return loader\n"
)


CONVERTED = {
    "classification": ('DALIClassificationIterator(pipe, reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL)',
                       'DaliPaddleIterator(pipe, ["data", "label"], batch_size=4, reader_meta=ndd.readers.File(file_root=root).get_metadata(), last_batch_policy="PARTIAL")'),
    "generic, size": ('DALIGenericIterator([pipe], ["x", "y"], size=10, auto_reset=True)',
                      'DaliPaddleIterator(pipe, ["x", "y"], batch_size=4, size=10, auto_reset=True)'),
    "level 0 pairs": ('DALIGenericIterator([pipe], [("x", 0), "y"], reader_name="Reader")',
                      'DaliPaddleIterator(pipe, [("x", 0), "y"], batch_size=4'),
    "an output_map variable": ('DALIGenericIterator([pipe], output_map, reader_name="Reader")',
                               "DaliPaddleIterator(pipe, output_map, batch_size=4"),
    # a policy computed elsewhere: the class takes its member's name, and serves all three
    "policy variable": ('DALIGenericIterator([pipe], ["x", "y"], reader_name="Reader", last_batch_policy=policy)',
                        'get_metadata(), last_batch_policy=policy.name)'),
    "two pipelines": ('DALIGenericIterator([pipe, pipe2], ["x", "y"], reader_name="Reader", last_batch_policy=LastBatchPolicy.DROP)',
                      'DaliPaddleMultiIterator([pipe, pipe2], ["x", "y"], batch_size=4, reader_meta=['),
}


@pytest.mark.parametrize("key", sorted(CONVERTED))
def test_iterators_converted(key):
    call, want = CONVERTED[key]
    result = convert_source(_SOURCE.format(call=call))
    assert not result.markers, [m.reason for m in result.markers]
    assert want in result.output, result.output
    assert "DALIGenericIterator(" not in result.output and "DALIClassificationIterator(" not in result.output
    cls = "DaliPaddleMultiIterator" if "Multi" in want else "DaliPaddleIterator"
    assert result.output.count("\nclass ") == 1 and f"\nclass {cls}:" in result.output


MARKED = {
    "lod level": ('DALIGenericIterator([pipe], ["x", ("y", 1)], reader_name="Reader")', "LoD level"),
    "lod level not written out": ('DALIGenericIterator([pipe], ["x", ("y", policy)], reader_name="Reader")', "LoD level"),
    "other reader name": ('DALIGenericIterator([pipe], ["x", "y"], reader_name="Other")', "reader_name"),
    "without output_map": ('DALIGenericIterator([pipe], reader_name="Reader")', "without output_map"),
    "one pipeline twice": ('DALIGenericIterator([pipe, pipe], ["x", "y"], reader_name="Reader")', "one pipeline twice"),
}


@pytest.mark.parametrize("key", sorted(MARKED))
def test_iterators_left_with_a_marker(key):
    call, words = MARKED[key]
    result = convert_source(_SOURCE.format(call=call))
    assert result.output.count("def pipe_fn(root):") == 1 and "@pipeline_def" in result.output
    assert "DaliPaddle" not in result.output
    reasons = [m.reason for m in result.markers]
    assert any(words in r and "Paddle DALI" in r for r in reasons), reasons


def test_torch_and_paddle_iterators_in_one_file_get_one_class_each():
    source = (
        "from nvidia.dali import fn, pipeline_def\n"
        "from nvidia.dali.plugin import paddle as dpd\n"
        "from nvidia.dali.plugin.pytorch import DALIGenericIterator\n\n\n"
        "@pipeline_def(batch_size=4)\n"
        "def pipe_fn(root):\n"
        '    jpegs, labels = fn.readers.file(file_root=root, name="Reader")\n'
        "    return jpegs, labels\n\n\n"
        "def run(root):\n"
        "    p1 = pipe_fn(root)\n"
        "    p2 = pipe_fn(root)\n"
        '    a = dpd.DALIGenericIterator(p1, ["x", "y"], reader_name="Reader")\n'
        '    b = DALIGenericIterator([p2], ["x", "y"], reader_name="Reader")\n'
        "    return a, b\n"
    )
    out = convert_source(source).output
    assert out.count("class DaliPaddleIterator:") == 1 and out.count("class DaliTorchIterator:") == 1
    assert 'a = DaliPaddleIterator(p1, ["x", "y"], batch_size=4' in out and 'b = DaliTorchIterator(p2, ["x", "y"], batch_size=4' in out
    assert "# dali-migrate" not in out
