"""A reader chosen by ``if``/``elif``/``else`` at the top of a pipeline: made once, before the loop,
by the same ``if`` (its tests ran once in pipeline mode too, when the pipeline was made). Where
that would not keep the meaning, the pipeline stays with a marker that says why."""

from _helpers import convert, first_marker

HEAD = "from nvidia.dali import fn, pipeline_def\n\n\n@pipeline_def(batch_size=2)\ndef p(root, file_list=None, shard=0):\n"


def _pipeline(branches: str, rest: str = "    return jpegs, labels\n") -> str:
    return convert(HEAD + branches + rest, header="")


def test_each_branch_makes_the_reader_and_the_loop_reads_it():
    out = _pipeline(
        "    if file_list is not None:\n"
        "        jpegs, labels = fn.readers.file(file_root=root, file_list=file_list, name='Reader')\n"
        "    elif shard:\n"
        "        jpegs, labels = fn.readers.file(file_root=root, shard_id=shard, num_shards=2, name='Reader')\n"
        "    else:\n"
        "        # everything\n"
        "        jpegs, labels = fn.readers.file(file_root=root, name='Reader')\n"
    )
    assert (
        "    if file_list is not None:\n"
        "        reader = ndd.readers.File(file_root=root, file_list=file_list)\n"
        "    elif shard:\n"
        "        reader = ndd.readers.File(file_root=root, shard_id=shard, num_shards=2)\n"
        "    else:\n"
        "        # everything\n"
        "        reader = ndd.readers.File(file_root=root)\n"
        "    while True:\n"
        "        for jpegs, labels in reader.next_epoch(batch_size=batch_size):\n"
    ) in out, out
    assert "dali-migrate:" not in out


def test_a_shuffling_branch_takes_the_pipeline_seed():
    out = _pipeline(
        "    if shard:\n"
        "        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True)\n"
        "    else:\n"
        "        jpegs, labels = fn.readers.file(file_root=root)\n"
    )
    assert "reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=seed_or_random)\n" in out
    assert "reader = ndd.readers.File(file_root=root)\n" in out


def test_without_else_is_marked():
    out = _pipeline("    if file_list is not None:\n        jpegs, labels = fn.readers.file(file_root=root, file_list=file_list)\n")
    assert "has no `else`" in first_marker(out)
    assert "fn.readers.file(" in out


def test_branches_making_different_readers_are_marked():
    out = _pipeline(
        "    if file_list is not None:\n"
        "        jpegs, labels = fn.readers.file(file_root=root, file_list=file_list)\n"
        "    else:\n"
        "        jpegs, labels = fn.readers.caffe(path=root)\n"
    )
    assert "every branch must make the same reader" in first_marker(out)


def test_branches_naming_the_reader_differently_are_marked():
    out = _pipeline(
        "    if shard:\n"
        "        jpegs, labels = fn.readers.file(file_root=root, name='A')\n"
        "    else:\n"
        "        jpegs, labels = fn.readers.file(file_root=root, name='B')\n"
    )
    assert "different name= values" in first_marker(out)


def test_branches_binding_other_names_are_marked():
    out = _pipeline(
        "    if shard:\n"
        "        jpegs, labels = fn.readers.file(file_root=root)\n"
        "    else:\n"
        "        labels, jpegs = fn.readers.file(file_root=root)\n"
    )
    assert "same names the same way" in first_marker(out)


def test_a_test_reading_the_graph_is_marked():
    out = convert(
        "from nvidia.dali import fn, pipeline_def\n\n\n@pipeline_def(batch_size=2)\ndef p(root):\n"
        "    flag = fn.random.coin_flip()\n"
        "    if flag:\n"
        "        jpegs, labels = fn.readers.file(file_root=root)\n"
        "    else:\n"
        "        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True)\n"
        "    return jpegs, labels, flag\n",
        header="",
    )
    assert "the test reads what the pipeline's operators computed" in first_marker(out)


def test_a_reader_chosen_by_if_beside_a_plain_reader():
    # two readers, read in turn: the plain one stays a plain line after the `if` that chose the other
    out = _pipeline(
        "    if shard:\n"
        "        jpegs, labels = fn.readers.file(file_root=root, shard_id=shard, num_shards=2)\n"
        "    else:\n"
        "        jpegs, labels = fn.readers.file(file_root=root)\n"
        "    extra, extra_labels = fn.readers.file(file_root=root, random_shuffle=True, seed=5)\n",
        "    return jpegs, labels, extra, extra_labels\n",
    )
    assert (
        "    if shard:\n"
        "        reader = ndd.readers.File(file_root=root, shard_id=shard, num_shards=2)\n"
        "    else:\n"
        "        reader = ndd.readers.File(file_root=root)\n"
        "    reader_2 = ndd.readers.File(file_root=root, random_shuffle=True, seed=5)\n"
    ) in out, out
    assert "dali-migrate:" not in out
