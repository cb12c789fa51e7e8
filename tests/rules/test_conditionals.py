"""rules/conditionals.py: pipelines with enable_conditionals=True.

Conversion and markers here; that converted code gives the pipeline's batches is checked by the
golden cases (tests/golden/conditionals_*.py, enable_conditionals.py) on real DALI.
"""

import textwrap

import pytest
from _helpers import HEADER, convert, pipeline

from dali_migrate.rules import all_rules
from dali_migrate.rules.conditionals import helper_source

COND = "@pipeline_def(batch_size=4, enable_conditionals=True)"
READ = "jpegs, labels = fn.readers.file(file_root='d')\nimages = fn.decoders.image(jpegs)\n"


def cond(body: str, params: str = "", module: str = "") -> str:
    """Convert a module with one conditional pipeline ``p(params)`` whose body is ``body``."""
    return convert(module + f"{COND}\ndef p({params}):\n" + textwrap.indent(textwrap.dedent(body), "    "))


def marked(out: str) -> bool:
    return "@pipeline_def" in out and "# dali-migrate: [pipeline-def] pipeline not converted" in out


# -- conditions on Python values ---------------------------------------------------------------


def test_parameter_condition_stays_in_the_loop():
    out = cond(READ + "if augment:\n    images = fn.flip(images)\nreturn images, labels\n", "augment=True")
    assert not marked(out)
    assert "                if augment:\n                    images = ndd.flip(images)\n" in out


def test_module_constant_and_pure_builtins_stay():
    out = cond(
        READ + "if SIZE > 16 and len(names) > 1:\n    images = fn.resize(images, size=SIZE)\nreturn images, labels\n",
        "names=('a', 'b')",
        "SIZE = 32\n",
    )
    assert not marked(out) and "if SIZE > 16 and len(names) > 1:" in out and "cond_" not in out


def test_global_assigned_in_a_function_is_not_a_constant():
    out = cond(
        READ + "if SIZE > 16:\n    images = fn.resize(images, size=32)\nreturn images, labels\n",
        module="SIZE = 32\ndef grow():\n    global SIZE\n    SIZE += 1\n",
    )
    # the pipeline evaluated it when it was made; grow() may run before the converted generator
    # first runs, so the converted function evaluates it when it is called, as the pipeline did
    assert not marked(out), out
    head, loop = out.split("def batches():")
    assert "condition = SIZE > 16" in head and "SIZE" not in loop


def test_other_condition_is_evaluated_once_before_the_loop():
    out = cond(READ + "if args.flip:\n    images = fn.flip(images)\nreturn images, labels\n", module="args = None\n")
    assert not marked(out)
    head, loop = out.split("while True:")
    assert "cond_flip = bool(args.flip)" in head and "if cond_flip:" in loop and "args.flip" not in loop


def test_elif_conditions_are_evaluated_only_where_the_pipeline_evaluated_them():
    out = cond(
        READ + "if cfg['a']:\n    images = fn.flip(images)\nelif cfg.get('b'):\n    images = fn.rotate(images, angle=3.0)\n"
        "else:\n    images = images + 1\nreturn images, labels\n",
        "cfg",
    )
    assert "cond_a = bool(cfg['a'])\n" in out
    assert "cond_b = not cond_a and bool(cfg.get('b'))\n" in out
    assert "if cond_a:" in out and "elif cond_b:" in out


def test_hoisted_condition_stays_after_the_setup_it_reads():
    out = cond("n = len(files)\n" + READ + "if n > random.randint(0, 3):\n    images = fn.flip(images)\nreturn images, labels\n", "files")
    head = out.split("while True:")[0]
    assert head.index("n = len(files)") < head.index("condition = n > random.randint(0, 3)")


def test_condition_on_a_value_the_loop_changes_is_marked():
    # `k = 4` rebinds a name the loop read before, so it stays in the loop: the condition cannot move
    out = cond("k = 3\n" + READ + "images = images * k\nk = 4\nif random.random() < k:\n    images = fn.flip(images)\nreturn images, labels\n")
    assert marked(out) and "the condition `random.random() < k` reads values computed per iteration" in out


def test_call_condition_inside_a_loop_is_marked_with_its_line():
    out = cond(READ + "for _ in range(2):\n    if random.random() < 0.5:\n        images = fn.flip(images)\nreturn images, labels\n")
    assert marked(out)
    assert "the condition `random.random() < 0.5` was evaluated when the pipeline was built" in out
    assert "(line 5 of p())" in out


def test_loop_variable_over_a_parameter_is_stable():
    out = cond(READ + "for name in augs:\n    if name == 'flip':\n        images = fn.flip(images)\nreturn images, labels\n", "augs")
    assert not marked(out) and "for name in augs:" in out


def test_ternary_and_boolean_operators_on_python_values():
    ok = cond(READ + "images = fn.flip(images, horizontal=1 if mode == 'train' else 0)\nreturn images, labels\n", "mode")
    assert not marked(ok)
    bad = cond(READ + "images = fn.flip(images, horizontal=1 if random.random() > 0.5 else 0)\nreturn images, labels\n")
    assert marked(bad) and "the condition `random.random() > 0.5`" in bad


def test_while_with_a_changing_condition_is_marked():
    out = cond(READ + "while n > 0:\n    images = fn.flip(images)\n    n -= 1\nreturn images, labels\n", "n=2")
    assert marked(out) and "`while` condition `n > 0`" in out


# -- conditions on DALI data -------------------------------------------------------------------


def test_if_else_on_data_becomes_per_sample_if():
    out = cond(READ + "if fn.random.coin_flip():\n    images = fn.flip(images)\nelse:\n    images = fn.rotate(images, angle=5.0)\nreturn images, labels\n")
    assert not marked(out)
    assert "def if_true(images):\n                    images = ndd.flip(images)\n                    return images\n" in out
    assert "def if_false(images):\n                    images = ndd.rotate(images, angle=5.0)\n" in out
    assert "images = per_sample_if(ndd.random.coin_flip(batch_size=batch_size, rng=rng), if_true, if_false, images)" in out
    assert out.count("def per_sample_if(") == 1 and out.index("def per_sample_if(") < out.index("def p(")


def test_if_without_else_passes_the_other_samples_through():
    out = cond(READ + "if labels == 0:\n    images = fn.flip(images)\nreturn images, labels\n")
    assert "def if_false(images):\n                    return images\n" in out


def test_not_swaps_the_branches():
    out = cond(READ + "if not labels == 0:\n    images = fn.flip(images)\nreturn images, labels\n")
    assert "per_sample_if(labels == 0, if_true, if_false, images)" in out
    assert "def if_true(images):\n                    return images\n" in out
    assert "def if_false(images):\n                    images = ndd.flip(images)\n" in out


def test_elif_is_an_if_in_the_else_branch_and_reads_what_it_needs():
    out = cond(
        "jpegs, labels = fn.readers.file(file_root='d')\nimages = fn.decoders.image(jpegs)\nm = fn.reductions.mean(images)\n"
        "if m < 50:\n    images = images + 20\nelif m > 200:\n    images = images - 20\nreturn images, labels\n"
    )
    assert "def if_false(m, images):\n                    def if_true_2(images):" in out
    assert "images = per_sample_if(m > 200, if_true_2, if_false_2, images)" in out
    assert "images = per_sample_if(m < 50, if_true, if_false, m, images)" in out


def test_several_outputs_and_branch_temporaries():
    out = cond(
        "jpegs, boxes, labels = fn.readers.coco(file_root='d', annotations_file='a')\nimages = fn.decoders.image(jpegs)\n"
        "if fn.random.coin_flip():\n    flipped = fn.flip(images)\n    images = flipped\n    boxes = fn.bb_flip(boxes)\n"
        "return images, boxes, labels\n"
    )
    assert not marked(out)
    assert "return images, boxes\n" in out and "images, boxes = per_sample_if(" in out
    assert "flipped = per_sample_if" not in out  # read only inside its branch: not merged


def test_if_on_data_inside_a_python_if():
    out = cond(READ + "if augment:\n    if labels == 1:\n        images = fn.flip(images)\nreturn images, labels\n", "augment")
    assert "if augment:\n                    def if_true(images):" in out


def test_single_returned_name_bound_in_the_if():
    out = cond(READ + "if labels == 1:\n    images = fn.flip(images)\nreturn images\n")
    assert not marked(out) and "outputs = (images,)" in out


def test_helper_name_avoids_the_module_and_is_shared_by_the_pipelines():
    src = "per_sample_if = 3\n" + "".join(
        f"{COND}\ndef p{i}():\n    j, l = fn.readers.file(file_root='d')\n    x = fn.decoders.image(j)\n"
        "    if l == 0:\n        x = fn.flip(x)\n    return x, l\n"
        for i in range(2)
    )
    out = convert(src)
    assert out.count("def per_sample_if_2(") == 1 and out.count("= per_sample_if_2(l == 0") == 2


# -- what stays marked -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "body, reason",
    [
        ("if labels == 0:\n    images = fn.rotate(images, angle=fn.random.uniform(range=(0, 5)))\n",
         "fn.random.uniform inside a branch of an `if` on DALI data draws random numbers"),
        ("if labels == 0:\n    images = fn.noise.gaussian(images)\n", "fn.noise.gaussian inside a branch"),
        ("if labels == 0:\n    m = fn.transforms.rotation(angle=3.0)\n    images = fn.warp_affine(images, matrix=m)\n",
         "fn.transforms.rotation inside a branch of an `if` on DALI data has no data input"),
        ("if labels == 0:\n    images = fn.pad(images)\n", "it pads every sample to the largest one of the batch"),
        ("if labels == 0:\n    images = fn.normalize(images, batch=True)\n", "fn.normalize(batch=...)"),
        ("if labels == 0:\n    images = fn.flip(images, horizontal=pick())\n", "`pick(...)` inside a branch"),
        ("if labels == 0:\n    print('x')\n    images = fn.flip(images)\n", "`print('x')` inside a branch"),
        ("if labels == 0:\n    extra = fn.flip(images)\nimages = extra\n", "sets `extra` in one branch only"),
        ("if labels == 0:\n    s = 1\nelse:\n    s = 2\nimages = images * s\n", "gives `s` a value that is not one DALI batch"),
        ("if labels > 0 and labels < 2:\n    images = fn.flip(images)\n", "`and`/`or` on DALI data"),
        ("images = fn.flip(images) if labels == 0 else images\n", "a conditional expression on DALI data raises"),
        ("images = fn.flip(images, horizontal=not labels)\n", "`and`/`or`/`not` on DALI data"),
        ("while labels > 0:\n    images = fn.flip(images)\n", "`while` on DALI data raises in pipeline mode"),
        ("for _ in range(2):\n    if labels == 0:\n        images = fn.flip(images)\n", "on DALI data inside a loop"),
        ("with ctx_manager():\n    if labels == 0:\n        images = fn.flip(images)\n", "inside a `with`/`try` block"),
        ("if labels == 0:\n    for _ in range(2):\n        images = fn.flip(images)\n", "a `for` statement inside a branch"),
        ("outs = fn.readers.file(file_root='e')\nif labels == 0:\n    images = fn.flip(outs[0])\n",
         "reads `outs`, which is DALI data but not one batch"),
        ("size = 3\nif labels == 0:\n    images = fn.resize(images, size=size)\n    size = size * 2\n",
         "rebinds `size`, a value from outside the `if` that is not one DALI batch"),
        ("s = 2\nif labels == 0:\n    s = fn.cast(labels, dtype=types.FLOAT)\nimages = images * s\n",
         "gives `s` a value that is not one DALI batch"),
        ("images = fn.cat(*[fn.flip(i) for i in [images] if labels])\n", "a comprehension's condition on DALI data"),
    ],
)
def test_marked(body, reason):
    out = cond(READ + body + "return images, labels\n")
    assert marked(out), out
    assert reason in out, out


def test_marker_names_the_line_counted_from_def():
    out = cond(READ + "\n\nif labels > 0 and labels < 2:\n    images = fn.flip(images)\nreturn images, labels\n")
    assert "(line 6 of p())" in out


def test_second_run_changes_nothing():
    from dali_migrate.engine import convert_source

    for out in (
        cond(READ + "if labels == 0:\n    images = fn.flip(images)\nreturn images, labels\n"),
        cond(READ + "if labels > 0 or labels < 2:\n    images = fn.flip(images)\nreturn images, labels\n"),
    ):
        assert convert_source(out).output == out


def test_enable_conditionals_false_converts_as_any_pipeline():
    out = pipeline("return fn.random.uniform()\n", "@pipeline_def(batch_size=2, enable_conditionals=False)")
    assert "@pipeline_def" not in out and "per_sample_if" not in out


def test_disabled_rule_leaves_conditionals_marked():
    rules = {r.id for r in all_rules()} - {"conditionals"}
    body = READ + "if labels == 0:\n    images = fn.flip(images)\nreturn images, labels\n"
    src = HEADER + f"{COND}\ndef p():\n" + textwrap.indent(body, "    ")
    out = convert(src[len(HEADER):], rules=rules)
    assert marked(out) and "need rule conditionals, which is disabled" in out
    # without any if, the rule is not needed
    plain = convert(f"{COND}\ndef p():\n" + textwrap.indent(READ + "return images, labels\n", "    "), rules=rules)
    assert not marked(plain)


# -- the helper written into converted files, on DALI ------------------------------------------


def _helper(module_name):
    np = pytest.importorskip("numpy")
    pytest.importorskip("nvidia.dali")
    if module_name == "runtime":
        import dali_migrate.runtime as ndd
    else:
        import nvidia.dali.experimental.dynamic as ndd
    scope = {"ndd": ndd}
    exec(helper_source("per_sample_if", "ndd"), scope)  # noqa: S102 - the text the codemod writes into files
    return np, ndd, scope["per_sample_if"]


@pytest.mark.parametrize("module_name", ["native", "runtime"])
def test_helper_runs_each_branch_on_its_samples(module_name):
    np, ndd, per_sample_if = _helper(module_name)
    x = ndd.as_batch([np.full((2, 2, 1), i, dtype=np.uint8) for i in range(5)], layout="HWC")
    seen = {}

    def if_true(x):
        seen["true"] = [int(np.asarray(s)[0, 0, 0]) for s in x]
        return ndd.cast(x + 100, dtype=ndd.uint8), ndd.flip(x, horizontal=1)

    def if_false(x):
        seen["false"] = [int(np.asarray(s)[0, 0, 0]) for s in x]
        return x, x

    pred = ndd.as_batch([np.float32(v) for v in (1, 0, 2.5, 0, -1)])  # any scalar type, read as a Python bool
    a, b = per_sample_if(pred, if_true, if_false, x)
    assert seen == {"true": [0, 2, 4], "false": [1, 3]}
    assert [int(np.asarray(s)[0, 0, 0]) for s in a] == [100, 1, 102, 3, 104]
    assert a.batch_size == 5 and a.layout == "HWC" and b.layout == "HWC"


@pytest.mark.parametrize("module_name", ["native", "runtime"])
def test_helper_skips_a_branch_without_samples(module_name):
    np, ndd, per_sample_if = _helper(module_name)
    x = ndd.as_batch([np.full((2,), i, dtype=np.int32) for i in range(3)])

    def never(x):
        raise AssertionError("a branch without samples must not run")

    out = per_sample_if(ndd.as_batch([np.array(False)] * 3), never, lambda x: x * 2, x)
    assert [np.asarray(s).tolist() for s in out] == [[0, 0], [2, 2], [4, 4]]


@pytest.mark.parametrize("module_name", ["native", "runtime"])
def test_helper_checks_like_dali(module_name):
    np, ndd, per_sample_if = _helper(module_name)
    x = ndd.as_batch([np.full((2,), i, dtype=np.int32) for i in range(2)])
    with pytest.raises(ValueError, match="Got a 1-d input as a condition"):
        per_sample_if(ndd.as_batch([np.array([True]), np.array([False])]), lambda x: x, lambda x: x, x)
    with pytest.raises(ValueError, match="Found distinct types"):
        per_sample_if(ndd.as_batch([np.array(True), np.array(False)]), lambda x: ndd.cast(x, dtype=ndd.float32), lambda x: x, x)


def test_chained_comparison_on_data_is_marked():
    # `1 <= lab < 2` is `(1 <= lab) and (lab < 2)` sample by sample in a pipeline; in Python the
    # first Batch is true and the chain would give `lab < 2` alone
    for body in ("lab = labels[0]\nif 1 <= lab < 2:\n    images = fn.flip(images)\n",
                 "lab = labels[0]\nm = 1 <= lab < 2\nimages = images * m\n"):
        out = cond(READ + body + "return images, labels\n")
        assert marked(out) and "a chained comparison on DALI data" in out, out
