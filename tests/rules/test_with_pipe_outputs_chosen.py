"""A `with pipe:` graph whose outputs an `if` at its end chooses (`if cuda: pipe.set_outputs(a.gpu())
else: pipe.set_outputs(a)`): the branch taken when the graph was defined gives the outputs, so the
converted loop keeps the `if` and yields what its branch holds. Where that is not what ran, the
graph stays with a marker."""

from _helpers import convert, first_marker

HEAD = (
    "import nvidia.dali.fn as fn\nfrom nvidia.dali.pipeline import Pipeline\n\n\n"
    "def make(root, cuda):\n"
    "    pipe = Pipeline(batch_size=2, num_threads=1, device_id=0)\n"
    "    with pipe:\n"
    "        jpegs, labels = fn.readers.file(file_root=root)\n"
)
TAIL = "    pipe.build()\n    return pipe\n"


def _convert(ending: str) -> str:
    return convert(HEAD + ending + TAIL, header="")


def test_each_branch_holds_its_outputs_and_the_loop_yields_them():
    out = _convert(
        "        if cuda:\n"
        "            pipe.set_outputs(jpegs.gpu(), labels.gpu())\n"
        "        else:\n"
        "            # on the CPU\n"
        "            pipe.set_outputs(jpegs, labels)\n"
    )
    assert (
        "                    if cuda:\n"
        "                        pipe_outputs = jpegs.gpu(), labels.gpu()\n"
        "                    else:\n"
        "                        # on the CPU\n"
        "                        pipe_outputs = jpegs, labels\n"
        "                    outputs = pipe_outputs\n"
        "                yield outputs\n"
    ) in out, out
    assert "dali-migrate:" not in out and "set_outputs" not in out


def test_without_else_is_marked():
    out = _convert("        if cuda:\n            pipe.set_outputs(jpegs.gpu(), labels.gpu())\n")
    assert "is chosen by the `if` that ends the `with pipe:` block" in first_marker(out)


def test_a_test_on_the_graphs_data_is_marked():
    out = _convert(
        "        flag = fn.random.coin_flip()\n"
        "        if flag:\n"
        "            pipe.set_outputs(jpegs, labels)\n"
        "        else:\n"
        "            pipe.set_outputs(labels, jpegs)\n"
    )
    assert "is chosen by the `if` that ends the `with pipe:` block" in first_marker(out)


def test_a_branch_that_does_not_end_with_set_outputs_is_marked():
    out = _convert(
        "        if cuda:\n"
        "            pipe.set_outputs(jpegs.gpu(), labels.gpu())\n"
        "        else:\n"
        "            pipe.set_outputs(jpegs, labels)\n"
        "            print('cpu')\n"
    )
    assert "is chosen by the `if` that ends the `with pipe:` block" in first_marker(out)


def test_branches_giving_one_output_and_a_reader_s_outputs_are_marked():
    out = convert(
        "import nvidia.dali.fn as fn\nfrom nvidia.dali.pipeline import Pipeline\n\n\n"
        "def make(root, both):\n"
        "    pipe = Pipeline(batch_size=2, num_threads=1, device_id=0)\n"
        "    with pipe:\n"
        "        data = fn.readers.file(file_root=root)\n"
        "        if both:\n"
        "            pipe.set_outputs(data)\n"
        "        else:\n"
        "            pipe.set_outputs(fn.flip(data[0]))\n" + TAIL,
        header="",
    )
    assert "one output or several" in first_marker(out) and "set_outputs" in out


def test_a_test_reading_an_attribute_is_marked():
    # `args.cuda` may change after the graph is defined; the converted loop would test it again
    out = convert(HEAD.replace("def make(root, cuda):", "def make(root, args):")
                  + "        if args.cuda:\n"
                  "            pipe.set_outputs(jpegs.gpu(), labels.gpu())\n"
                  "        else:\n"
                  "            pipe.set_outputs(jpegs, labels)\n" + TAIL, header="")
    assert "an attribute such as `args.cuda`" in first_marker(out)
