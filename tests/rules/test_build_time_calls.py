"""rules/build_time_calls.py: Python calls a pipeline evaluated once, at build time."""

from _helpers import convert, pipeline

from dali_migrate.rules import all_rules

READER = 'j, l = fn.readers.file(file_root="d")\nimg = fn.decoders.image(j)\n'


def _head_and_loop(out: str):
    head, _, loop = out.partition("while True:")
    return head, loop


def test_random_call_in_an_argument_is_evaluated_once_before_the_loop():
    out = convert("import random\n@pipeline_def(batch_size=4)\ndef p():\n"
                  '    j, l = fn.readers.file(file_root="d")\n    img = fn.decoders.image(j)\n'
                  "    img = fn.rotate(img, angle=random.uniform(-10, 10))\n    return img, l\n")
    head, loop = _head_and_loop(out)
    assert "# evaluated once, as when the pipeline was built\n    angle = random.uniform(-10, 10)" in head
    assert "ndd.rotate(img, angle=angle)" in loop and "random.uniform" not in loop


def test_values_that_cannot_change_stay_in_the_loop():
    body = (READER + "img = fn.resize(img, size=[int(224.0), max(1, 2)], antialias=bool(1))\n"
            "img = fn.crop_mirror_normalize(img, mean=np.array([1.0, 2.0, 3.0]) * math.sqrt(4), std=[1.0] * 3)\n"
            "return img, l\n")
    out = convert("@pipeline_def(batch_size=4)\ndef p():\n" + "".join("    " + ln + "\n" for ln in body.splitlines()),
                  header="import math\nimport numpy as np\n" + _header())
    assert "evaluated once" not in out
    assert "size=[int(224.0), max(1, 2)]" in out and "np.array([1.0, 2.0, 3.0]) * math.sqrt(4)" in out


def test_methods_of_data_and_dali_calls_stay_in_the_loop():
    out = pipeline(READER + "return img, l.gpu()\n")
    assert "evaluated once" not in out and "outputs = img, l.gpu()" in out


def test_numpy_random_and_user_functions_are_hoisted_in_statement_order():
    out = convert("def pick(): return 3\n@pipeline_def(batch_size=4)\ndef p():\n"
                  '    j, l = fn.readers.file(file_root="d")\n    img = fn.decoders.image(j)\n'
                  "    img = fn.resize(img, size=pick())\n    img = img * np.random.uniform(0.5, 2.0)\n"
                  "    return img, l\n", header="import numpy as np\n" + _header())
    head, loop = _head_and_loop(out)
    assert head.index("size = pick()") < head.index("value = np.random.uniform(0.5, 2.0)")
    assert "ndd.resize(img, size=size)" in loop and "img = img * value" in loop


def test_hoisted_call_comes_after_the_setup_it_reads():
    out = pipeline("import random\n" + READER.replace('file_root="d"', "file_root=root") +
                   "limit = 20\nimg = fn.rotate(img, angle=random.uniform(-limit, limit))\nreturn img, l\n")
    head, _ = _head_and_loop(out)
    assert head.index("limit = 20") < head.index("angle = random.uniform(-limit, limit)")


def test_a_comprehension_with_a_random_call_is_hoisted_whole():
    out = pipeline("import random\n" + READER + "img = fn.resize(img, size=[random.randint(8, 16) for _ in range(2)])\nreturn img, l\n")
    head, loop = _head_and_loop(out)
    assert "size = [random.randint(8, 16) for _ in range(2)]" in head and "size=size" in loop


def test_a_call_reading_per_iteration_values_is_marked():
    out = pipeline(READER + "img = fn.resize(img, size=compute_size(l))\nreturn img, l\n")
    assert "`compute_size(l)` was evaluated once, when the pipeline was built, but reads `l`" in out
    assert "@pipeline_def" in out


def test_a_call_inside_a_python_loop_of_the_pipeline_is_marked():
    out = pipeline("import random\n" + READER + "for _ in range(3):\n    img = fn.rotate(img, angle=random.uniform(0, 9))\nreturn img, l\n")
    assert "`random.uniform(0, 9)` was evaluated once, when the pipeline was built; here it is inside `for _ in range(3):`" in out


def test_a_lambda_body_is_left_alone():
    out = pipeline(READER + "img = fn.resize(img, size=(lambda: 3)())\nreturn img, l\n")
    # the call of the lambda is Python, evaluated once; the lambda itself is not entered
    assert "size = (lambda: 3)()" in out


def test_rule_disabled_marks_instead_of_converting():
    out = convert("import random\n@pipeline_def(batch_size=4)\ndef p():\n"
                  "    return fn.random.uniform(range=[0, random.random()])\n",
                  rules={r.id for r in all_rules()} - {"build-time-calls"})
    assert "need rule build-time-calls, which is disabled" in out


def _header():
    from _helpers import HEADER

    return HEADER


def test_condition_of_a_python_if_is_evaluated_once_before_the_loop():
    out = pipeline("import random\n" + READER + "if random.random() < 0.5:\n    img = fn.flip(img, horizontal=1)\nreturn img, l\n")
    head, loop = _head_and_loop(out)
    assert "value = random.random()" in head and "if value < 0.5:" in loop


def test_call_in_an_elif_condition_is_marked():
    # it ran at build time only when the first condition was false: hoisting would call it always
    out = pipeline("import random\n" + READER + "if flag:\n    img = fn.flip(img, horizontal=1)\n"
                   "elif random.random() < 0.5:\n    img = fn.flip(img, vertical=1)\nreturn img, l\n")
    assert "`random.random()` was evaluated once, when the pipeline was built; here it is inside `if flag:`" in out


# -- a function the pipeline gets from the function that builds it (dali_migrate/graph_callables.py) --

BUILDER = (
    "import numpy as np\nimport nvidia.dali.fn as fn\nfrom nvidia.dali.pipeline import Pipeline\n\n"
    "def data():\n    return [np.int32([1, 2])], [np.int32([3, 4])]\n\n"
    "def build(operation):\n    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)\n    with pipe:\n"
    "        a, b = fn.external_source(source=data, num_outputs=2)\n        pipe.set_outputs(a, operation(a, b))\n    return pipe\n\n"
    "def show(pipe):\n    pipe.build()\n    print(pipe.run()[1].as_array())\n\n"
)


def test_lambdas_of_arithmetic_passed_to_the_builder_are_called_every_iteration():
    out = convert(BUILDER + "pipe = build(lambda x, y: x * y)\nshow(pipe)\nfor op in [(lambda x, y: x - y), (lambda x, y: -(x // 2) + y)]:\n    pipe = build(op)\n    show(pipe)\n", header="")
    assert "# dali-migrate" not in out and "evaluated once" not in out
    assert "outputs = a, operation(a, b)" in out


def test_a_table_of_operations_and_names_looped_over_converts():
    src = BUILDER + "ops = [((lambda x, y: x | y), '|'), ((lambda x, y: x & y), '&')]\nfor op, name in ops:\n    pipe = build(op)\n    show(pipe)\n"
    out = convert(src, header="")
    assert "# dali-migrate" not in out and "pipe = build(op)" in out


def test_a_function_of_the_file_returning_arithmetic_converts():
    out = convert(BUILDER + "def add(x, y):\n    return x + y\n\npipe = build(add)\nshow(pipe)\n", header="")
    assert "# dali-migrate" not in out


def test_a_lambda_reading_a_global_is_marked_with_the_reason():
    # `k` was read when the pipeline was built; the converted loop would read it at every batch
    out = convert(BUILDER + "k = 10\npipe = build(lambda x, y: x + k)\nshow(pipe)\nk = 42.5\n", header="")
    assert "with pipe:" in out
    assert "but `operation` gets `lambda x, y: x + k` here, which reads `k`, whose value the pipeline took when it was built" in out


def test_a_table_changed_elsewhere_is_marked():
    src = BUILDER + "ops = [(lambda x, y: x + y)]\nops.append(lambda x, y: x * y)\nfor op in ops:\n    pipe = build(op)\n    show(pipe)\n"
    out = convert(src, header="")
    assert "with pipe:" in out and "`ops` is used other than looped over" in out


def test_a_builder_passed_something_unknown_is_marked():
    out = convert(BUILDER + "import operator\npipe = build(operator.add)\nshow(pipe)\n", header="")
    assert "with pipe:" in out and "`operator.add` is passed where the pipeline's function goes" in out


def test_a_call_of_the_builders_parameter_that_is_not_arithmetic_is_marked():
    out = convert(BUILDER + "pipe = build(lambda x, y: np.maximum(x, y))\nshow(pipe)\n", header="")
    assert "with pipe:" in out and "which computes `np.maximum(x, y)`, which is not arithmetic of its arguments" in out


def test_external_source_arguments_other_than_the_source_are_evaluated_once():
    out = convert(
        "import numpy as np\nimport nvidia.dali.fn as fn\nimport nvidia.dali.types as types\nfrom nvidia.dali import pipeline_def\n\n"
        "def kind(name):\n    return types.to_dali_type(name)\n\ndef data():\n    return [np.int32([1, 2])], [np.float32([3, 4])]\n\n"
        "@pipeline_def(batch_size=1)\ndef p():\n    a, b = fn.external_source(source=data, num_outputs=2, dtype=[kind('int32'), kind('float32')])\n    return a, b\n",
        header="")
    head, _, loop = out.partition("for source_data in")
    assert "dtype = kind('int32')\n" in head and "dtype_2 = kind('float32')\n" in head
    assert "external_source_batch(source_data[0], dtype, copy=True)" in loop and "external_source_batch(source_data[1], dtype_2, copy=True)" in loop
    assert "source_2 = data" in head


def test_globals_stays_in_the_loop_as_the_modules_dict():
    # globals() is the same dict at every evaluation: a module variable read through it (as
    # hidden_globals.py writes it) is read in the loop like one read by name
    out = pipeline(READER + 'return fn.cast(l, dtype=types.FLOAT) * globals()["scale"]\n')
    head, loop = _head_and_loop(out)
    assert "evaluated once" not in head and '* globals()["scale"]' in loop


# A reader made by a function of another module (a plugin's reader, as in a Cassandra or LMDB
# loader): the pipeline ran its operators every iteration; before the loop, one call would give
# one result that every iteration would decode again.
IMPORTED = "from loaders import open_reader, crop_size\n" + _header()


def test_data_made_by_a_function_of_another_module_is_marked():
    out = convert("@pipeline_def(batch_size=4)\ndef p(root):\n    jpegs, labels = open_reader(root)\n"
                  "    images = fn.decoders.image(jpegs)\n    return images, labels\n", header=IMPORTED)
    assert ("pipeline not converted: `jpegs`, which comes from `open_reader(root)` that dali-migrate cannot see "
            "into, is DALI data here (`fn.decoders.image(jpegs)`)") in out
    assert "@pipeline_def(batch_size=4)" in out and "while True" not in out


def test_through_a_name_and_moved_to_the_gpu_it_is_marked_too():
    out = convert("@pipeline_def(batch_size=4)\ndef p(root):\n    reader = open_reader(root)\n"
                  "    jpegs, labels = reader\n    labels = labels.gpu()\n    return jpegs, labels\n",
                  header=IMPORTED)
    assert "`labels`, which comes from `open_reader(root)` that dali-migrate cannot see into, is DALI data here (`labels.gpu()`)" in out


def test_a_call_of_another_module_as_an_operator_input_is_marked():
    out = pipeline(READER + "return fn.cat(img, open_reader('d')), l\n".replace("open_reader", "loaders.open_reader"))
    assert "`loaders.open_reader('d')`, which dali-migrate cannot see into, is DALI data here (`fn.cat(img, loaders.open_reader('d'))`)" in out


def test_a_value_of_another_module_given_as_an_operator_argument_is_evaluated_once():
    # crop_size(...) gives what an argument takes (a number): it converts, evaluated once as before
    out = convert("@pipeline_def(batch_size=4)\ndef p(root):\n    size = crop_size(root)\n"
                  '    j, l = fn.readers.file(file_root=root)\n    img = fn.decoders.image(j)\n'
                  "    return fn.resize(img, size=size, antialias=crop_size(1) > 0), l\n", header=IMPORTED)
    assert "# dali-migrate" not in out
    head, loop = _head_and_loop(out)
    assert "size = crop_size(root)" in head and "value = crop_size(1)" in head
    assert "ndd.resize(img, size=size, antialias=value > 0)" in loop


def test_a_name_bound_again_to_a_value_of_its_own_is_not_marked():
    out = convert("@pipeline_def(batch_size=4)\ndef p(root):\n    jpegs = open_reader(root)\n    jpegs = root\n"
                  "    j, l = fn.readers.file(file_root=jpegs)\n    return fn.decoders.image(j), l\n", header=IMPORTED)
    assert "# dali-migrate" not in out


def test_a_value_read_through_cpu_then_a_method_data_lacks_is_not_dali_data():
    # `boxes(...).cpu().numpy()`: a DataNode has no numpy(), so the original could only run with
    # something else there (a torch tensor): evaluated once before the loop, as it was
    out = convert("@pipeline_def(batch_size=4)\ndef p(root, boxes):\n"
                  "    anchors = boxes(order='ltrb').cpu().numpy().flatten().tolist()\n"
                  "    j, l = fn.readers.file(file_root=root)\n    img = fn.decoders.image(j)\n"
                  "    return img, fn.cast(l, dtype=anchors[0])\n", header=IMPORTED)
    assert "# dali-migrate" not in out
    head, loop = _head_and_loop(out)
    assert "anchors = boxes(order='ltrb').cpu().numpy().flatten().tolist()" in head


def test_a_value_read_through_cpu_then_data_s_own_method_is_still_marked():
    out = convert("@pipeline_def(batch_size=4)\ndef p(root):\n    jpegs, labels = open_reader(root)\n"
                  "    shape = labels.cpu().shape()\n    images = fn.decoders.image(jpegs)\n"
                  "    return images, shape\n", header=IMPORTED)
    assert "that dali-migrate cannot see into, is DALI data here" in out


def test_data_node_attribute_list_is_dali_s():
    data_node = __import__("pytest").importorskip("nvidia.dali.data_node")
    from dali_migrate.rules.build_time_calls import DATA_NODE_ATTRS

    own = {n for n in dir(data_node.DataNode) if not n.startswith("__")}
    own |= set(vars(data_node.DataNode("x", "cpu", None)))
    assert own <= DATA_NODE_ATTRS


def test_a_call_evaluated_only_under_a_condition_is_marked():
    # parse_crop(crop) ran only where crop was given, pick() only where angle was not: before the
    # loop they would run either way (parse_crop(None) raising, pick() drawing)
    for body in ("return fn.crop(x, crop=parse_crop(crop) if crop else (20, 20))\n",
                 "return fn.rotate(x, angle=angle or pick())\n"):
        out = pipeline(body)
        assert "@pipeline_def" in out and "only where a condition" in out, out
    out = pipeline("return fn.crop(x, crop=parse_crop(crop if crop else '20,20'))\n")
    assert "only where a condition" not in out


# -- reads of the pipeline's argument (cfg.size) in the loop's compound statements --

CFG = "@pipeline_def(batch_size=4)\ndef p(cfg):\n" + "".join("    " + ln + "\n" for ln in READER.splitlines())


def test_an_if_and_its_branches_read_the_argument_once_under_the_same_if():
    out = convert(CFG + "    if cfg.big:\n        if cfg.flip:\n            img = fn.flip(img, horizontal=cfg.h)\n"
                  "    else:\n        img = fn.resize(img, size=cfg.size)\n    return img, l\n", header=_header())
    head, loop = _head_and_loop(out)
    assert ("    big = cfg.big\n    if big:\n        flip = cfg.flip\n        if flip:\n            h = cfg.h\n"
            "    else:\n        size = cfg.size\n") in head, out
    assert "cfg" not in loop and "if big:" in loop and "if flip:" in loop, out
    assert "ndd.flip(img, horizontal=h)" in loop and "ndd.resize(img, size=size)" in loop


def test_an_elif_condition_is_read_where_the_first_condition_failed():
    out = convert(CFG + "    if flag:\n        img = fn.flip(img, horizontal=1)\n"
                  "    elif cfg.big:\n        img = fn.resize(img, size=cfg.size)\n    return img, l\n",
                  header="flag = True\n" + _header())
    head, loop = _head_and_loop(out)
    assert "    if flag:\n        pass\n    else:\n        big = cfg.big\n        if big:\n            size = cfg.size\n" in head, out
    assert "elif big:" in loop and "ndd.resize(img, size=size)" in loop, out


def test_a_for_reads_its_iterable_once_and_refuses_reads_in_its_body():
    out = convert(CFG + "    for k in range(cfg.n):\n        img = fn.flip(img, horizontal=k % 2)\n    return img, l\n",
                  header=_header())
    head, loop = _head_and_loop(out)
    assert "n = cfg.n" in head and "for k in range(n):" in loop, out
    out = convert(CFG + "    for k in range(2):\n        img = fn.flip(img, horizontal=cfg.flips[k])\n    return img, l\n",
                  header=_header())
    assert "`cfg.flips` was read once, when the pipeline was built; here it is inside `for k in range(2):`" in out, out


def test_a_read_in_a_while_is_marked():
    out = convert(CFG + "    while cfg.more:\n        img = fn.flip(img, horizontal=1)\n        break\n    return img, l\n",
                  header=_header())
    assert "`cfg.more` was read once, when the pipeline was built; here it is inside `while cfg.more:`" in out, out


def test_a_read_is_taken_again_where_the_pipeline_s_code_may_change_the_argument():
    # one name for both reads of cfg.size, unless the pipeline's own code touches cfg in between
    body = ("    img = fn.crop(img, crop=cfg.size)\n    if cfg.big:\n        img = fn.resize(img, size=cfg.size)\n"
            "    return img, l\n")
    same = convert(CFG + body, header=_header())
    head, loop = _head_and_loop(same)
    assert head.count("= cfg.size") == 1 and "ndd.resize(img, size=size)" in loop, same
    changed = convert(CFG.replace("def p(cfg):\n", "def p(cfg):\n    cfg.sizes.append(1)\n") + body, header=_header())
    head, loop = _head_and_loop(changed)
    assert head.count("= cfg.size") == 2, changed
