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


def test_helper_called_in_the_returned_tuple_is_taken_out_and_inlined():
    out = convert(
        "def aug(x, seed=123):\n    x = fn.decoders.image(x)\n    x = fn.jitter(x, seed=seed)\n    return x\n\n"
        + _PIPE + "    return aug(j, seed=3), l\n"
    )
    assert "def aug(" not in out and "dali-migrate:" not in out
    # what the helper returns is a name: it stands where the call was, no temporary left
    assert "outputs = x, l\n" in out and "aug_result" not in out
    assert "rng_jitter = ndd.random.RNG(seed=3)" in out


def test_helper_calls_in_one_statement_run_in_pythons_order():
    out = convert(
        "def aug(x):\n    c = fn.random.coin_flip()\n    return fn.flip(x, horizontal=c)\n\n"
        + _PIPE + "    y = fn.decoders.image(j)\n    return aug(y), aug(y), l\n"
    )
    assert "dali-migrate:" not in out
    # the first view's value is kept in a temporary: the second helper's operators run before the tuple
    first, second = [i for i in range(len(out)) if out.startswith("ndd.random.coin_flip(", i)]
    assert first < out.index("aug_result = ndd.flip(") < second
    assert "outputs = aug_result, ndd.flip(y, horizontal=c), l" in out


def test_helper_call_nested_in_an_operator_call_is_taken_out_before_it():
    out = convert(
        "def aug(x):\n    return fn.flip(x)\n\n" + _PIPE + "    y = fn.resize(aug(fn.decoders.image(j)), size=(8, 8))\n    return y, l\n"
    )
    assert "dali-migrate:" not in out
    # the argument first (bound to the parameter), then the helper, then resize around its result
    assert "x = ndd.decoders.image(j)\n" in out and "y = ndd.resize(ndd.flip(x), size=(8, 8))" in out


def test_helper_call_after_an_operator_call_in_the_same_tuple_is_not_moved_before_it():
    # taking aug() out would run its operators before fn.rotate's: a random stream's order changes
    out = convert(
        "def aug(x):\n    return fn.random.coin_flip() * x\n\n"
        + _PIPE + "    y = fn.decoders.image(j)\n    return fn.rotate(y, angle=fn.random.uniform(range=(0, 5))), aug(y), l\n"
    )
    assert "@pipeline_def" in out and "def aug(" in out
    assert "calls aug(), which builds DALI operators itself and cannot be written into the pipeline" in out
    assert "change what runs first" in out


def test_helper_call_evaluated_only_sometimes_is_not_taken_out():
    for expr in ("aug(y) if root else y", "[aug(z) for z in (y,)][0]", "root and aug(y)"):
        out = convert("def aug(x):\n    return fn.flip(x)\n\n" + _PIPE + f"    y = fn.decoders.image(j)\n    return {expr}, l\n")
        assert "def aug(" in out and "@pipeline_def" in out, expr


def test_helper_whose_body_has_a_lambda_says_so():
    out = convert(
        "def read(root):\n    key = lambda s: s\n    return fn.readers.file(file_root=root, name=key('R'))\n\n"
        "@pipeline_def(batch_size=2)\ndef p(root):\n    j, l = read(root)\n    return j, l\n"
    )
    assert "calls read(), which builds DALI operators itself and cannot be written into the pipeline: read() defines functions, lambdas" in out


def test_method_called_on_a_helpers_result_keeps_the_helper_first():
    out = convert("def aug(x):\n    return fn.flip(fn.decoders.image(x))\n\n" + _PIPE + "    return aug(j).gpu(), l\n")
    assert "dali-migrate:" not in out and "outputs = ndd.flip(ndd.decoders.image(j)).gpu(), l" in out


def test_a_returned_name_the_next_helper_binds_again_stays_in_its_temporary():
    out = convert(
        "def aug(x):\n    x = fn.flip(x)\n    return x\n\n" + _PIPE + "    y = fn.decoders.image(j)\n    return aug(y), aug(y), l\n"
    )
    assert "dali-migrate:" not in out
    # the second helper's statements rebind x: the first view is read from the temporary
    assert "aug_result = x\n" in out and "outputs = aug_result, x, l" in out
    assert out.index("aug_result = x\n") < out.rindex("x = ndd.flip(x)")


def test_why_a_pipeline_fails_with_a_helper_written_in_names_the_helpers_own_variables():
    # cassandra-dali-plugin: the helper's `images` clashes with the pipeline's and is renamed when
    # written in; the marker quotes the helper as written (`images`, not `images_2`, a name that
    # depends on what else the file binds and so changed on a second run)
    src = (
        "from mylib import make_reader\n\n\ndef aug(images):\n    images = fn.decoders.image(images)\n"
        "    return fn.flip(images, horizontal=1)\n\n\n"
        + _PIPE.replace("    j, l = fn.readers.file(file_root=root)\n", "    images, labels = make_reader(root)\n")
        + "    out = aug(images)\n    return out, labels\n"
    )
    out = convert(src)
    assert "not converted with aug() written into it: `images`, which comes from `make_reader(root)`" in out, out
    assert "images_2" not in out and "(`fn.decoders.image(images)`)" in out
    assert convert(out, header="") == out


def test_helper_default_naming_a_global_the_pipeline_binds_is_not_inlined():
    # out_size=size was the module's size when augment() was defined; inlined, `size` would be the
    # pipeline's parameter (16 instead of 32)
    helper = "size = 32\n\n\ndef augment(images, out_size=size):\n    return fn.resize(images, size=out_size)\n\n\n"
    body = "    images = augment(fn.decoders.image(j))\n    return images, l\n"
    out = convert(helper + _PIPE.replace("def p(root):", "def p(root, size=16):") + body)
    assert "@pipeline_def" in out and "augment() reads size from the module, a name the code that calls it binds" in out
    out = convert(helper + _PIPE + body)
    assert "dali-migrate:" not in out and "images = ndd.resize(images_2, size=size)" in out
