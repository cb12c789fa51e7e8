from _helpers import convert

_PIPE = "@pipeline_def(batch_size=2)\ndef p(root):\n    j, l = fn.readers.file(file_root=root)\n"


def test_helper_called_as_a_statement_is_written_into_the_pipeline_and_removed():
    out = convert("def aug(x, mirror=1):\n    x = fn.flip(x, horizontal=mirror)\n    return x\n\n" + _PIPE + "    images = aug(fn.decoders.image(j))\n    return images, l\n")
    assert "def aug(" not in out and "dali-migrate:" not in out
    assert "ndd.flip(" in out and "horizontal=1" in out
    # the argument is evaluated once, where the call was, before the helper's statements
    assert out.index("ndd.decoders.image(j)") < out.index("ndd.flip(")


def test_random_operator_of_a_helper_gets_the_pipelines_rng_and_batch_size():
    out = convert("def aug(x):\n    c = fn.random.coin_flip()\n    return fn.flip(x, horizontal=c)\n\n" + _PIPE + "    x = aug(j)\n    return x, l\n")
    assert "ndd.random.coin_flip(batch_size=batch_size, rng=" in out and "def aug(" not in out


def test_python_call_of_a_helper_is_evaluated_once_before_the_loop():
    out = convert(
        "import random\ndef aug(x):\n    return fn.rotate(x, angle=random.uniform(-5, 5))\n\n" + _PIPE + "    x = aug(fn.decoders.image(j))\n    return x, l\n"
    )
    assert out.index("random.uniform(-5, 5)") < out.index("while True:")


def test_helper_used_outside_pipelines_stays_with_its_marker():
    out = convert("def aug(x):\n    return fn.flip(x)\n\n" + _PIPE + "    x = aug(j)\n    return x, l\n\ndef other(y):\n    return aug(y)\n")
    assert "def aug(x):\n    return fn.flip(x)" in out
    assert "aug() builds DALI operators with fn.*" in out
    assert "ndd.flip(j)" in out  # the pipeline converted all the same


def test_helper_with_a_loop_is_not_inlined():
    out = convert("def aug(x):\n    for _ in range(2):\n        x = fn.flip(x)\n    return x\n\n" + _PIPE + "    x = aug(j)\n    return x, l\n")
    assert "calls aug(), which builds DALI operators itself" in out and "@pipeline_def" in out


def test_decorated_or_redefined_helpers_are_not_inlined():
    for helper in (
        "import functools\n@functools.lru_cache\ndef aug(x):\n    return fn.flip(x)\n",
        "def aug(x):\n    return fn.flip(x)\naug = wrap(aug)\n",
    ):
        out = convert(helper + "\n" + _PIPE + "    x = aug(j)\n    return x, l\n")
        assert "calls aug(), which builds DALI operators itself" in out, helper


def test_recursive_helper_is_not_inlined():
    out = convert("def aug(x):\n    y = aug(x)\n    return fn.flip(y)\n\n" + _PIPE + "    x = aug(j)\n    return x, l\n")
    assert "calls aug(), which builds DALI operators itself" in out


def test_helper_reading_a_global_the_pipeline_binds_is_not_inlined():
    out = convert("size = 4\ndef aug(x):\n    return fn.resize(x, resize_x=size)\n\n" + _PIPE.replace("p(root)", "p(root, size=8)") + "    x = aug(j)\n    return x, l\n")
    assert "calls aug(), which builds DALI operators itself" in out


def test_decidable_if_on_a_parameter_keeps_only_the_branch_taken():
    out = convert(
        "def aug(x, mirror):\n    if mirror:\n        x = fn.flip(x)\n    else:\n        x = fn.rotate(x, angle=5)\n    return x\n\n"
        + _PIPE + "    x = aug(j, True)\n    return x, l\n"
    )
    assert "ndd.flip(" in out and "rotate" not in out and "if " not in out


def test_pipeline_that_fails_with_the_helper_inlined_says_why():
    out = convert(
        "def aug(x):\n    return fn.python_function(x, function=abs, device='gpu')\n\n" + _PIPE + "    x = aug(j)\n    return x, l\n"
    )
    assert "def aug(x):" in out and "@pipeline_def" in out
    assert "not converted with aug() written into it: fn.python_function" in out


def test_helpers_calling_helpers_are_inlined_recursively_and_both_removed():
    out = convert(
        "def inner(x):\n    return fn.flip(x)\n\ndef outer(x):\n    y = inner(x)\n    return fn.rotate(y, angle=3)\n\n"
        + _PIPE + "    x = outer(j)\n    return x, l\n"
    )
    assert "def inner" not in out and "def outer" not in out and "dali-migrate:" not in out
    assert out.index("ndd.flip(") < out.index("ndd.rotate(")
