import pytest
from _helpers import convert, pipeline


def test_settings_become_keyword_arguments_with_decorator_defaults():
    out = convert(
        "@pipeline_def(batch_size=8, num_threads=3, device_id=None, seed=1)\ndef p(root, k=2):\n    return fn.random.uniform()\n"
    )
    assert "def p(root, k=2, *, batch_size=8, num_threads=3, device_id=None, seed=1):" in out


def test_bare_decorator_makes_batch_size_required():
    out = convert("@pipeline_def\ndef p():\n    return fn.random.uniform()\n")
    assert "def p(*, batch_size, num_threads=None, device_id=None, seed=None):" in out
    assert "ndd.EvalContext(num_threads=num_threads, device_id=device_id)" in out


def test_single_output_is_a_one_tuple():
    out = pipeline("return fn.random.uniform()\n")
    assert "outputs = (ndd.random.uniform(batch_size=batch_size, rng=rng),)" in out


def test_no_reader_loops_forever():
    out = pipeline("return fn.random.uniform()\n")
    assert "while True:" in out and "next_epoch" not in out


def test_setup_code_runs_once_before_the_loop():
    out = pipeline('size = [8, 8]\nj, l = fn.readers.file(file_root="d")\nimg = fn.resize(fn.decoders.image(j), size=size)\nreturn img, l\n')
    assert out.index("size = [8, 8]") < out.index("while True")


def test_docstring_and_comments_kept():
    out = pipeline('"""Doc."""\n# read\nj, l = fn.readers.file(file_root="d")\nreturn j, l\n')
    assert '"""Doc."""' in out and "# read" in out


def test_enable_conditionals_not_a_literal_blocks():
    # rules/conditionals.py converts enable_conditionals=True; a computed value could mean either.
    out = pipeline("return fn.random.uniform()\n", "@pipeline_def(batch_size=2, enable_conditionals=flag)")
    assert "enable_conditionals= is not a literal True or False" in out and "@pipeline_def" in out


def test_pipeline_module_imports_fixed_and_second_run_is_identity():
    from dali_migrate.engine import convert_source

    out = pipeline("return fn.random.uniform()\n")
    assert "import nvidia.dali.experimental.dynamic as ndd" in out
    assert "from nvidia.dali import pipeline_def" not in out and "import nvidia.dali.fn as fn" not in out
    assert convert_source(out).output == out


def test_parameter_named_like_a_setting_blocks():
    out = convert("@pipeline_def\ndef p(seed):\n    return fn.random.uniform(seed=seed)\n")
    assert "clash with the pipeline settings" in out
    # DALI's _discriminate_args gives such a call's value to the function alone
    assert "goes to the function alone, not to the Pipeline" in out


def test_scalar_constant_blocks_the_pipeline():
    # ndd operators reject types.ScalarConstant at run time: the pipeline must not convert silently.
    # (types.Constant converts: rules/constant.py.)
    from dali_migrate.engine import convert_source

    src = (
        "from nvidia.dali import fn, pipeline_def, types\n\n\n"
        "@pipeline_def(batch_size=2)\n"
        "def p(root):\n"
        "    jpegs, labels = fn.readers.file(file_root=root)\n"
        "    return labels * types.ScalarConstant(2, dtype=types.INT32)\n"
    )
    out = convert_source(src)
    assert "@pipeline_def" in out.output
    assert any("types.ScalarConstant" in m.reason for m in out.markers)


_RESUME_SRC = '''\
from nvidia.dali import fn, pipeline_def


@pipeline_def(batch_size=2)
def p(root):
    error = 3
    j, l = fn.readers.file(file_root=root)
    return fn.decoders.image(j), l


def use(root):
    pipe = p(root)
    pipe.build()
    for _ in range(4):
        {call}
'''


def _resume_case(call: str) -> str:
    from dali_migrate.engine import convert_source

    return convert_source(_RESUME_SRC.replace("{call}", call)).output


def test_run_caught_makes_the_generator_resumable():
    out = _resume_case("try:\n            pipe.run()\n        except Exception:\n            pass")
    assert "@ResumeAfterErrors.wrap\ndef p(" in out and "import functools" in out
    # `error` is the pipeline's own name: the handler's name must not unbind it
    assert "except Exception as error_2:\n                outputs = error_2" in out
    assert out.count("class ResumeAfterErrors") == 1


def test_run_not_caught_stays_a_plain_generator():
    for call in ("pipe.run()", "try:\n            pipe.run()\n        finally:\n            pass",
                 "try:\n            x = 1\n        except Exception:\n            pipe.run()"):
        out = _resume_case(call)
        assert "ResumeAfterErrors" not in out and "functools" not in out, call


def test_run_caught_only_for_its_end_stays_a_plain_generator():
    out = _resume_case("try:\n            pipe.run()\n        except (StopIteration, KeyboardInterrupt):\n            break")
    assert "ResumeAfterErrors" not in out
    out = _resume_case("try:\n            pipe.run()\n        except StopIteration:\n            break\n        except ValueError:\n            pass")
    assert "@ResumeAfterErrors.wrap" in out


def test_gpu_reader_is_made_on_the_pipelines_device():
    # ndd places a GPU reader on the current device when it is made: inside the pipeline's context
    out = pipeline(
        """\
        frames = fn.readers.video(device="gpu", filenames=files, sequence_length=3)
        return frames
        """,
        decorator="@pipeline_def(batch_size=2, device_id=1)",
    )
    assert "    with ctx:\n        reader = ndd.readers.Video(device=\"gpu\"" in out
    assert "reader.next_epoch(batch_size=batch_size, ctx=ctx)" in out
    cpu = pipeline('jpegs, labels = fn.readers.file(file_root="x")\nreturn jpegs, labels\n')
    assert "\n    reader = ndd.readers.File(" in cpu and "ctx=ctx" not in cpu


HIDDEN = '''
import numpy as np
import nvidia.dali.fn as fn
from nvidia.dali import pipeline_def

batch_size = {value}


@pipeline_def(batch_size=4)
def p():
    return fn.external_source(source=lambda: [np.zeros(2)] * batch_size)


pipe = p({call})
pipe.build()
out = pipe.run()
'''


def test_a_module_variable_named_like_a_setting_the_body_reads_is_read_through_globals():
    # the converted function's batch_size= parameter would be what the body reads (hidden_globals.py)
    out = convert(HIDDEN.format(value=1, call=""), header="")
    assert "dali-migrate:" not in out and "def p(*, batch_size=4," in out
    assert '[np.zeros(2)] * globals()["batch_size"]' in out


def test_a_module_variable_that_always_equals_the_setting_converts():
    out = convert(HIDDEN.format(value=4, call=""), header="")
    assert "dali-migrate:" not in out and "def p(*, batch_size=4," in out
    assert "globals()" not in out
    # a call that passes another batch size would give the body that one: read the module's
    out = convert(HIDDEN.format(value=4, call="batch_size=8"), header="")
    assert "dali-migrate:" not in out and '* globals()["batch_size"]' in out and "pipe = p(batch_size=8)" in out


TWO_READERS = """\
images = fn.readers.numpy(file_root=root, file_filter="img_*.npy", name="images")
masks = fn.readers.numpy(file_root=root, file_filter="mask_*.npy", name="masks")
masks = fn.cast(masks, dtype=types.INT64)
return images, masks
"""


def test_several_readers_each_give_a_batch_every_iteration_from_endless_epochs():
    out = convert("@pipeline_def(batch_size=2)\ndef p(root):\n" + "".join("    " + line + "\n" for line in TWO_READERS.splitlines()))
    assert "dali-migrate:" not in out
    assert (
        '    reader = ndd.readers.Numpy(file_root=root, file_filter="img_*.npy")\n'
        '    reader_2 = ndd.readers.Numpy(file_root=root, file_filter="mask_*.npy")\n'
        "\n"
        "    # one batch of each reader per iteration, each going on into its next epoch on its own, as in a pipeline\n"
        "    def endless(reader):\n"
        "        while True:\n"
        "            yield from reader.next_epoch(batch_size=batch_size)\n"
        "\n"
        "    for (images,), (masks,) in zip(endless(reader), endless(reader_2)):\n"
        "        with ctx:\n"
        "            masks = ndd.cast(masks, dtype=types.INT64)\n"
        "            outputs = images, masks\n"
        "        yield outputs\n"
    ) in out


def test_several_readers_targets_keep_their_shapes_and_new_names_avoid_the_modules():
    out = convert(
        "endless = 1\n\n@pipeline_def(batch_size=2)\ndef p(root):\n"
        '    jpegs, labels = fn.readers.file(file_root=root)\n    everything = fn.readers.file(file_root=root)\n'
        "    return jpegs, everything[1]\n"
    )
    assert "dali-migrate:" not in out
    assert "    def endless_2(reader):\n" in out
    # a name bound to a reader's outputs holds all of them, as next_epoch's tuple does
    assert "for (jpegs, labels), everything in zip(endless_2(reader), endless_2(reader_2)):" in out


def test_gpu_chained_on_a_reader_moves_its_output_every_iteration():
    out = pipeline('data = fn.readers.numpy(file_root="d").gpu()\nreturn fn.normalize(data, device="gpu")\n')
    assert "dali-migrate:" not in out
    assert 'reader = ndd.readers.Numpy(file_root="d")\n' in out
    assert "for (data,) in reader.next_epoch(batch_size=batch_size):\n            with ctx:\n                data = data.gpu()\n" in out
    two = convert("@pipeline_def(batch_size=2)\ndef p(root):\n" + "".join(
        "    " + line.replace(', name="images")', ', name="images").gpu()') + "\n" for line in TWO_READERS.splitlines()))
    assert "for (images,), (masks,) in zip(endless(reader), endless(reader_2)):\n        with ctx:\n            images = images.gpu()\n" in two


def test_gpu_chained_on_a_reader_of_several_outputs_is_marked():
    out = pipeline('data = fn.readers.file(file_root="d").gpu()\nreturn data\n')
    assert "pipeline not converted: fn.readers.file(...).gpu(): the reader does not give one output here" in out


def test_a_gpu_reader_beside_another_reader_is_marked():
    out = pipeline(
        'frames = fn.readers.video(device="gpu", filenames=files, sequence_length=3)\n'
        'jpegs, labels = fn.readers.file(file_root="d")\nreturn frames, labels\n'
    )
    assert ("pipeline not converted: fn.readers.video on the GPU beside another reader: DALI 2.4's next_epoch keeps "
            "the pipeline's EvalContext entered between batches") in out


def test_a_second_reader_not_on_a_line_of_its_own_is_marked():
    out = pipeline('a, b = fn.readers.file(file_root="d")\nc = fn.decoders.image(fn.readers.file(file_root="e")[0])\nreturn a, c\n')
    assert "pipeline not converted: fn.readers.file must be assigned on a line of its own" in out


def test_the_analysis_notes_each_reader_in_order():
    import libcst as cst

    from dali_migrate.catalog import load
    from dali_migrate.dali_imports import collect
    from dali_migrate.pipeline_analysis import analyze, helpers_with_ops, pipeline_decorator

    module = cst.parse_module(
        "import nvidia.dali.fn as fn\nfrom nvidia.dali import pipeline_def\n\n"
        "@pipeline_def(batch_size=2)\ndef p(root):\n"
        "    size = 4\n"
        '    data = fn.readers.numpy(file_root=root, file_filter="d*.npy").gpu()\n'
        '    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, seed=size)\n'
        "    return data, fn.decoders.image(jpegs), labels\n"
    )
    names = collect(module)
    func = module.body[2]
    info = analyze(func, pipeline_decorator(func, names), names, load(), helpers_with_ops(module, names), module=module)
    assert info.blockers == []
    assert [(r.index, r.op.fn_name, r.outputs, r.to_gpu) for r in info.readers] == [
        (1, "readers.numpy", 1, True), (2, "readers.file", 2, False)]
    # both run once, before the loop; their outputs are data the loop reads
    assert info.reader_indices == {1, 2} and {1, 2} <= info.setup and 0 in info.setup


def test_pure_setup_keeps_the_generator_function():
    out = pipeline('size = [8, 8]\nn = len(size) * 2\nj, l = fn.readers.file(file_root="d")\nreturn fn.resize(fn.decoders.image(j), size=size), l\n')
    assert "def batches():" not in out and "return batches()" not in out


def test_setup_that_acts_runs_when_the_pipeline_is_made():
    # np.random.seed() in the body ran when the pipeline was made: the converted function runs it
    # then too, and returns the generator of the batches
    out = pipeline('np.random.seed(3)\nj, l = fn.readers.file(file_root="d")\nreturn j, l\n')
    body = out[out.index("def p("):]
    assert body.index("np.random.seed(3)") < body.index("def batches():") < body.index("while True:")
    assert body.rstrip().endswith("return batches()")


def test_reader_arguments_that_call_code_make_it_eager_too():
    out = pipeline('j, l = fn.readers.file(files=sorted(glob.glob("d/*.jpg")))\nreturn j, l\n')
    assert "def batches():" in out


def test_names_the_loop_binds_again_are_nonlocal():
    # a cycling source is started again by the loop: the set-up's variable, declared nonlocal
    out = convert(
        "import random\nfrom nvidia.dali import pipeline_def, fn\n\n\n"
        "def gen():\n    for i in range(3):\n        yield [np.array([i]), np.array([i])]\n\n\n"
        "@pipeline_def(batch_size=2)\ndef p(value):\n    random.seed(value)\n"
        "    x = fn.external_source(source=gen, cycle=True)\n    return x\n"
    )
    inner = out[out.index("def batches():"):]
    assert inner.startswith("def batches():\n        nonlocal source_iter\n")
    assert "source_iter = source_2()" in inner and out.index("random.seed(value)") < out.index("def batches():")


def test_single_output_unpacked_from_a_reader():
    out = pipeline('files, labels = fn.readers.file(file_root="d")\nreturn labels\n')
    assert "for files, labels in reader.next_epoch(batch_size=batch_size):" in out
    assert "outputs = (labels,)" in out and "dali-migrate:" not in out


def test_single_output_unpacked_from_a_python_call_stays_marked():
    out = pipeline('files, labels = fn.readers.file(file_root="d")\na, b = split(labels)\nreturn a\n')
    assert "cannot tell whether `a` is one output or several" in out


def test_single_output_returned_through_another_name():
    # DALI's webdataset notebook: `output = blured; return output`
    out = pipeline('files, labels = fn.readers.file(file_root="d")\nimg = fn.decoders.image(files)\n'
                   'blured = fn.gaussian_blur(img, sigma=0.6)\noutput = blured\nreturn output\n')
    assert "outputs = (output,)" in out and "dali-migrate:" not in out
    out = pipeline('files, labels = fn.readers.file(file_root="d")\nfirst = labels\nout = first\nreturn out\n')
    assert "outputs = (out,)" in out and "dali-migrate:" not in out


def test_outputs_returned_through_another_name_keep_the_tuple():
    out = pipeline('files, labels = fn.readers.file(file_root="d")\nboth = files, labels\nout = both\nreturn out\n')
    assert "outputs = out\n" in out and "dali-migrate:" not in out


def test_a_name_bound_again_after_the_alias_stays_marked():
    # `output` holds what `blured` held at the alias; its later binding says nothing about that
    out = pipeline('files, labels = fn.readers.file(file_root="d")\nblured = files\noutput = blured\n'
                   'blured = files, labels\nreturn output\n')
    assert "cannot tell whether `output` is one output or several" in out


def test_output_checks_are_not_dropped():
    """output_dtype= / output_ndim= are checks (the pipeline raises where an output differs), not
    tunings: dropped, a wrong output would go on unnoticed. Decorator or call, the pipeline stays."""
    for decorator, call in (
        ('@pipeline_def(batch_size=4, output_dtype=types.UINT8)', "p()"),
        ("@pipeline_def(batch_size=4)", "p(output_ndim=[3, 1])"),
    ):
        out = convert(f'{decorator}\ndef p():\n    j, l = fn.readers.file(file_root="d")\n    return j, l\n\n'
                      f"pipe = {call}\npipe.build()\nprint(pipe.run())\n")
        assert "@pipeline_def" in out and "pipe.run()" in out
        key = "output_dtype=" if "dtype" in decorator else "output_ndim="
        assert f"{key} makes the pipeline check its outputs'" in out, out


def test_tuning_only_arguments_are_dropped():
    out = convert('@pipeline_def(batch_size=4, prefetch_queue_depth=3, exec_dynamic=True)\ndef p():\n'
                  '    j, l = fn.readers.file(file_root="d")\n    return j, l\n\npipe = p(py_num_workers=2)\npipe.build()\nprint(pipe.run())\n')
    assert "@pipeline_def" not in out and "dali-migrate:" not in out and "print(next(pipe))" in out


REBOUND = """\
import numpy as np
from nvidia.dali import fn, pipeline_def


@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def p(root):
    j, l = fn.readers.file(file_root=root)
    images = fn.decoders.image(j, device="cpu")
    {body}
    return small, large


def shapes(root):
    pipe = p(root)
    pipe.build()
    return [[np.asarray(t).shape for t in pipe.run()[k]] for _ in range(3) for k in (0, 1)]
"""


def test_a_value_changed_after_an_operator_read_it_is_marked(tmp_path, fixture_data):
    """The operator took the value the name had when the pipeline was built: converted, the first
    binding ran once before the loop and the change every iteration (16, 32, 64...)."""
    from _helpers import run_both
    from dali_migrate.engine import convert_source

    for body, name in (
        ("size = 16\n    small = fn.resize(images, size=(size, size))\n    size *= 2\n    large = fn.resize(images, size=(size, size))", "size"),
        ("window = [20, 20]\n    small = fn.crop(images, crop=window)\n    window[0] = 10\n    large = fn.crop(images, crop=window)", "window"),
        ("window = [20, 20]\n    small = fn.crop(images, crop=window)\n    window.append(3)\n    large = fn.crop(images, crop=window[:2])", "window"),
    ):
        out = convert_source(REBOUND.format(body=body)).output
        assert "@pipeline_def" in out and f"`{name}` is changed after an operator read it" in out, out
    # a new name for the new value converts, and gives what the pipeline gives
    src = REBOUND.format(body="size = 16\n    small = fn.resize(images, size=(size, size))\n    size2 = size * 2\n"
                              "    large = fn.resize(images, size=(size2, size2))")
    out = convert_source(src).output
    assert "dali-migrate:" not in out
    want, got = run_both(tmp_path, src, out, "shapes", str(fixture_data / "images"))
    assert want == got and want[0][0] == (16, 16, 3) and want[1][0] == (32, 32, 3)



LOOPED = """\
import numpy as np
from nvidia.dali import fn, pipeline_def


@pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=5)
def p(root, scale):
    j, l = fn.readers.file(file_root=root)
    {body}
    return j, {out}


def scales(root):
    pipe = p(root, 10.0)
    pipe.build()
    return [float(np.asarray(pipe.run()[1][0])) for _ in range(3)]
"""


@pytest.mark.parametrize("body", [
    "scale = fn.random.uniform(range=[1.0, 2.0]) * scale",
    "scale *= fn.random.uniform(range=[1.0, 2.0])",
    "scale = 2.0\n    scaled = fn.random.uniform(range=[1.0, 2.0]) * scale\n    scale = scaled",  # built: 2.0 each time
    "s = None\n    if s is None:\n        s = fn.random.uniform(range=[1.0, 2.0])\n    scale = s * scale",
    "if True:\n        scale = fn.random.uniform(range=[1.0, 2.0]) * scale",
])
def test_a_name_read_then_bound_again_every_iteration_is_marked(body):
    """The pipeline computed `scale` once from the parameter; a loop doing the same statement
    would multiply the previous iteration's batch from the second iteration on."""
    from dali_migrate.engine import convert_source

    out = convert_source(LOOPED.format(body=body, out="scale")).output
    assert "@pipeline_def" in out and "` is read and then bound again by statements that run every iteration" in out, out


@pytest.mark.parametrize("body", [
    "scaled = fn.random.uniform(range=[1.0, 2.0]) * scale",  # the new value under a name of its own
    "scale = fn.random.uniform(range=[1.0, 2.0])\n    scaled = scale * 10.0",  # bound before it is read
    "s = None\n    if scale > 0:\n        s = fn.random.uniform(range=[1.0, 2.0])\n    scaled = s * scale",
])
def test_a_new_value_under_a_new_name_or_bound_before_it_is_read_converts(tmp_path, fixture_data, body):
    from dali_migrate.engine import convert_source
    from dali_migrate.testing import assert_equivalent

    src = LOOPED.format(body=body, out="scaled")
    out = convert_source(src).output
    assert "dali-migrate:" not in out, out
    (tmp_path / "orig.py").write_text(src)
    (tmp_path / "conv.py").write_text(out)
    # (the converted side runs on dali_migrate.runtime, which draws the pipeline's random numbers)
    verdict = assert_equivalent(tmp_path / "orig.py", "p", against=tmp_path / "conv.py", iterations=3,
                                params={"root": str(fixture_data / "images"), "scale": 10.0})
    assert verdict.iterations == 3


def test_settings_follow_parameters_written_on_lines_of_their_own():
    out = convert("@pipeline_def\ndef p(\n    root, size\n):\n    return fn.random.uniform()\n")
    assert "def p(\n    root, size, *, batch_size, num_threads=None, device_id=None, seed=None\n):\n" in out


def test_locals_in_the_pipeline_keeps_it():
    # the converted function's scope also holds batch_size=, num_threads=, ctx, the reader...
    out = pipeline("jpegs, labels = fn.readers.file(file_root='d')\nprint(sorted(locals()))\nreturn jpegs, labels\n")
    assert "@pipeline_def" in out and "locals() would list the converted function's own names too" in out
