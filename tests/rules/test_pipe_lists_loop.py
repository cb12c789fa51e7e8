"""Lists of pipelines a loop fills (pipe_lists.plan_appended), as DALI's JAX examples make one
pipeline per device; and pipelines only printed. The iterators over such lists are checked against
DALI's in tests/test_jax_iterator.py."""

from __future__ import annotations

import pytest

from dali_migrate.engine import convert_source

HEAD = (
    "import jax\n"
    "from nvidia.dali import fn, pipeline_def\n"
    "from nvidia.dali.plugin.pytorch import DALIGenericIterator\n\n\n"
    "@pipeline_def(batch_size=4)\n"
    "def pipe_fn(root, shard_id, num_shards):\n"
    '    jpegs, labels = fn.readers.file(file_root=root, name="Reader", shard_id=shard_id, num_shards=num_shards)\n'
    "    return jpegs, labels\n\n\n"
    "def loader(root, n):\n"
)

LOOP = (
    "pipes = []\n"
    "for i, device in enumerate(jax.devices()):\n"
    "    pipe = pipe_fn(root, i, jax.device_count(), device_id=i)\n"
    "    print(pipe)\n"
    "    pipes.append(pipe)\n"
    'return DALIGenericIterator(pipes, ["data", "label"], reader_name="Reader")\n'
)


def _convert(body: str):
    return convert_source(HEAD + "".join(f"    {line}\n" for line in body.splitlines()))


def test_loop_list_converts_like_a_comprehension():
    result = _convert(LOOP)
    assert not result.markers, result.output
    out = result.output
    assert "    for i, device in enumerate(jax.devices()):\n        pipe = pipe_fn(root, i, jax.device_count(), device_id=i)\n" in out
    assert "        print(pipe)\n        pipes.append(pipe)\n" in out
    assert ("reader_meta=[ndd.readers.File(file_root=root, shard_id=i, num_shards=jax.device_count()).get_metadata() "
            "for i, device in enumerate(jax.devices())]") in out


def test_range_loop_and_len_of_the_list():
    body = LOOP.replace("for i, device in enumerate(jax.devices()):", "for i in range(n):").replace(
        "return DALIGenericIterator(", "print(len(pipes))\nreturn DALIGenericIterator(")
    result = _convert(body)
    assert not result.markers, result.output
    assert "for i in range(n)]" in result.output


def test_a_loop_that_builds_the_filled_list_goes():
    body = LOOP.replace("return DALIGenericIterator(", "for p in pipes:\n    p.build()\nreturn DALIGenericIterator(")
    result = _convert(body)
    assert not result.markers, result.output
    assert "for p in pipes" not in result.output and ".build()" not in result.output


MARKED = {
    "made below the first statement": (LOOP.replace("    pipe = pipe_fn", "    shard = i\n    pipe = pipe_fn"), "made by the loop's first statement"),
    "appended twice": (LOOP.replace("    pipes.append(pipe)\n", "    pipes.append(pipe)\n    pipes.append(pipe)\n"), "`pipes` is used here"),
    "appended under a condition": (LOOP.replace("    pipes.append(pipe)\n", "    if i % 2:\n        pipes.append(pipe)\n"),
                                   "not a statement of a `for` loop's own body"),
    "break": (LOOP.replace("    pipes.append(pipe)\n", "    pipes.append(pipe)\n    if i > 2:\n        break\n"), "break"),
    "list not empty": (LOOP.replace("pipes = []", "pipes = [None]"), "made empty"),
    "list used otherwise": (LOOP.replace("return DALIGenericIterator(", "pipes.reverse()\nreturn DALIGenericIterator("),
                            "the list of pipelines `pipes` is used here"),
    "build loop inside the filling loop": (LOOP.replace("    pipes.append(pipe)\n", "    pipes.append(pipe)\n    for p in pipes:\n        p.build()\n"),
                                           "the list of pipelines `pipes` is used here"),
    "iterable that may change": (LOOP.replace("enumerate(jax.devices())", "enumerate(devices())"), "iterable other than"),
    "appended to something else": (LOOP.replace("pipes.append(pipe)", "registry[i].append(pipe)"), "cannot follow"),
}


@pytest.mark.parametrize("key", sorted(MARKED))
def test_loops_left_with_a_marker(key):
    body, words = MARKED[key]
    result = _convert(body)
    assert "@pipeline_def" in result.output and "DALIGenericIterator(pipes" in result.output
    assert any(words in m.reason for m in result.markers), [m.reason for m in result.markers]


def test_printed_pipeline_is_left_as_it_is():
    body = 'pipe = pipe_fn(root, 0, 1)\nprint(pipe)\nprint(f"{pipe!r} made")\npipe.build()\nreturn pipe.run()\n'
    result = _convert(body)
    assert not result.markers, result.output
    assert 'print(pipe)\n    print(f"{pipe!r} made")\n    return next(pipe)' in result.output


@pytest.mark.parametrize("use", ['str(pipe)', 'print(pipe, file=pipe)', 'f"{pipe:>10}"', 'print(*[pipe])'])
def test_other_uses_as_text_are_marked(use):
    result = _convert(f"pipe = pipe_fn(root, 0, 1)\nx = {use}\nreturn pipe.run()\n")
    assert "@pipeline_def" in result.output
    assert any("`pipe` is used by `x = " in m.reason for m in result.markers), [m.reason for m in result.markers]


def test_print_defined_in_the_file_is_not_the_builtin():
    source = HEAD.replace("def loader", "def print(x):\n    return x\n\n\ndef loader") + (
        "    pipe = pipe_fn(root, 0, 1)\n    print(pipe)\n    return pipe.run()\n")
    result = convert_source(source)
    assert "@pipeline_def" in result.output
    assert any("print() returns what it got" in m.reason for m in result.markers), [m.reason for m in result.markers]
