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
