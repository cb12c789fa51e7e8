import pytest
from _helpers import convert

PIPE = '@pipeline_def(batch_size=4)\ndef p(root):\n    j, l = fn.readers.file(file_root=root, name="R")\n    return j, l\n\n'


def test_build_removed_run_becomes_next():
    out = convert(PIPE + 'pipe = p("d", prefetch_queue_depth=3)\npipe.build()\nout = pipe.run()\n')
    assert 'pipe = p("d")\nout = next(pipe)\n' in out


def test_tensorlist_methods():
    out = convert(PIPE + "import numpy as np\npipe = p('d')\nj, l = pipe.run()\nx = l.at(0)\ny = j.as_cpu()\nz = l.as_array()\nn = len(l)\nw = l[1]\nt = l.as_tensor()\ns = l.shape()\n")
    for expected in ["x = np.array(l.select(0))", "j.cpu()", "np.array(ndd.as_tensor(l))", "n = l.batch_size", "w = l.select(1)", "t = ndd.as_tensor(l)", "s = l.shape\n"]:
        assert expected in out, expected


def test_outputs_tuple_indexing():
    out = convert(PIPE + "pipe = p('d')\nout = pipe.run()\nx = out[1].at(0)\n")
    # a CPU TensorList's at(i) was a numpy array: it stays one
    assert "x = np.array(out[1].select(0))" in out
    assert out.startswith("import numpy as np\n")


def test_epoch_size_substitutes_call_arguments():
    out = convert(PIPE + "pipe = p(args.root)\nn = pipe.epoch_size('R')\n")
    assert 'n = ndd.readers.File(file_root=args.root).get_metadata()["epoch_size_padded"]' in out


def test_pipeline_passed_to_iterator_is_left_with_markers():
    # PyTorch iterators over one pipeline convert (tests/test_torch_iterator.py); MXNet's do not.
    out = convert(PIPE + "from nvidia.dali.plugin.mxnet import DALIGenericIterator\npipe = p('d')\nit = DALIGenericIterator(pipe, ['a', 'b'])\n")
    assert "@pipeline_def" in out
    assert "# dali-migrate: [call-site] the pipeline `pipe` is given to DALIGenericIterator, which dali-migrate does not convert" in out
    assert "MXNet iterator: iterate the converted generator" in out


def test_pipeline_passed_to_torch_iterator_converts():
    out = convert(PIPE + "from nvidia.dali.plugin.pytorch import DALIGenericIterator\npipe = p('d')\nit = DALIGenericIterator(pipe, ['a', 'b'])\n")
    assert "@pipeline_def" not in out and "# dali-migrate" not in out
    assert "it = DaliTorchIterator(pipe, ['a', 'b'], batch_size=4)" in out
    assert "class DaliTorchIterator:" in out


def test_unknown_method_blocks():
    out = convert(PIPE + "pipe = p('d')\npipe.serialize()\n")
    assert "pipe.serialize() has no automatic dynamic-mode conversion" in out and "@pipeline_def" in out


def test_shared_output_names_convert_together():
    src = PIPE.replace("def p", "def q") + PIPE + "a = p('d')\nb = q('e')\nx, y = a.run()\nx, y = b.run()\nprint(y.at(0))\n"
    out = convert(src)
    assert "next(a)" in out and "next(b)" in out and "y.select(0)" in out


def test_at_of_a_batch_that_may_be_on_the_gpu_calls_a_function_written_into_the_file():
    # in a pipeline with GPU operators an output may be on either device (a reader's labels stay on
    # the CPU): .at(i) gave a numpy array for a CPU batch, a TensorGPU for a GPU one
    src = (
        '@pipeline_def(batch_size=4)\ndef g(root):\n    j, l = fn.readers.file(file_root=root)\n'
        '    return fn.decoders.image(j, device="mixed"), l\n\n'
        "pipe = g('d')\nimgs, labels = pipe.run()\na = imgs.at(0)\nc = labels.at(1)\nb = labels.as_cpu().at(0)\n"
    )
    out = convert(src)
    assert "a = sample_at(imgs, 0)" in out and "c = sample_at(labels, 1)" in out
    assert out.count("def sample_at(batch, i):") == 1
    assert 'return np.array(sample) if batch.device.device_type == "cpu" else sample' in out
    assert "b = np.array(labels.cpu().select(0))" in out


def test_at_gives_what_dali_gives_where_the_device_is_a_parameter(tmp_path, fixture_data):
    pytest.importorskip("nvidia.dali")
    import numpy as np
    from _modules import load_source

    src = (
        "import numpy as np\nimport nvidia.dali.fn as fn\nfrom nvidia.dali import pipeline_def\n\n\n"
        "@pipeline_def(batch_size=2, num_threads=1, device_id=None)\ndef g(root, device):\n"
        "    j, l = fn.readers.file(file_root=root)\n    return fn.decoders.image(j, device=device), l\n\n\n"
        "def first(root):\n    pipe = g(root, 'cpu')\n    pipe.build()\n    imgs, labels = pipe.run()\n"
        "    return imgs.at(1), labels.at(0)\n"
    )
    out = convert(src, header="")
    assert "sample_at(imgs, 1), sample_at(labels, 0)" in out and "dali-migrate:" not in out
    root = str(fixture_data / "images")
    want = load_source(tmp_path, "original", src).first(root)
    got = load_source(tmp_path, "converted", out).first(root)
    for w, g in zip(want, got):
        assert type(g) is type(w) is np.ndarray and np.array_equal(g, w)


def test_seed_minus_one_at_the_call_becomes_none():
    out = convert(PIPE + "pipe = p('d', seed=-1)\n")
    assert "pipe = p('d', seed=None)" in out


def test_blocked_pipeline_reports_needs_review():
    from dali_migrate.engine import convert_source
    from dali_migrate.model import Status
    from _helpers import HEADER

    result = convert_source(HEADER + "@pipeline_def(batch_size=2)\ndef p():\n    return fn.no_such_op()\n")
    assert result.status is Status.NEEDS_REVIEW
    assert len(result.markers) == 1


RUN_AND_PRINT = (
    "import nvidia.dali.backend as backend\n"
    "def run_and_print(pipe):\n    pipe.build()\n    output = pipe.run()\n"
    "    for i, out in enumerate(output):\n        if type(out) == backend.TensorListGPU:\n            out = out.as_cpu()\n"
    "        print(i, out.as_array())\n\n"
)


def test_pipeline_passed_to_a_function_of_the_file_converts_its_body():
    out = convert(PIPE + RUN_AND_PRINT + "pipe = p('d')\nrun_and_print(pipe)\npipe = p('e')\nrun_and_print(pipe)\n")
    assert "@pipeline_def" not in out and "# dali-migrate" not in out
    assert "    output = next(pipe)\n" in out and "pipe.build()" not in out
    assert 'if out.device.device_type == "gpu":\n            out = out.cpu()' in out
    assert "print(i, np.array(ndd.as_tensor(out)))" in out


def test_function_that_also_gets_something_else_stays_with_its_pipelines():
    out = convert(PIPE + RUN_AND_PRINT + "pipe = p('d')\nrun_and_print(pipe)\nrun_and_print(other)\n")
    assert "@pipeline_def" in out and "pipe.run()" in out and "type(out) == backend.TensorListGPU" in out
    assert "run_and_print() gets a pipeline in `pipe` elsewhere, but here something dali-migrate cannot follow" in out


def test_function_that_assigns_its_parameter_is_left():
    out = convert(PIPE + "def show(pipe):\n    pipe.build()\n    pipe = pipe\n    print(pipe.run())\n\npipe = p('d')\nshow(pipe)\n")
    assert "@pipeline_def" in out and "show() assigns its parameter `pipe`" in out


def test_function_that_returns_its_pipeline_or_outputs_is_left():
    out = convert(PIPE + "def run(pipe):\n    pipe.build()\n    return pipe.run()\n\nouts = run(p('d'))\n")
    assert "@pipeline_def" in out and "run() returns what it got in `pipe`" in out


def test_pipeline_inline_in_the_call_and_outputs_passed_on_convert():
    src = (
        PIPE + "def examine(pipe_out):\n    print(pipe_out[0].at(0), len(pipe_out[1]))\n\n"
        "def twice(pipe):\n    for _ in range(2):\n        examine(pipe.run())\n\ntwice(p('d'))\n"
    )
    out = convert(src)
    assert "@pipeline_def" not in out and "# dali-migrate" not in out
    assert "print(np.array(pipe_out[0].select(0)), pipe_out[1].batch_size)" in out
    assert "examine(next(pipe))" in out and "twice(p('d'))" in out


def test_outputs_passed_to_a_function_defined_twice_go_to_the_definition_above_the_call():
    # in a notebook, a helper redefined by a later cell: module-level code runs in order, so the
    # call made between the two definitions runs the first one
    src = PIPE + "def examine(o):\n    print(o[0].at(0))\n\npipe = p('d')\nexamine(pipe.run())\n\ndef examine(o):\n    print(o)\n"
    out = convert(src)
    assert "@pipeline_def" not in out and "# dali-migrate" not in out
    assert "def examine(o):\n    print(np.array(o[0].select(0)))\n" in out and "def examine(o):\n    print(o)\n" in out


def test_outputs_passed_to_a_function_defined_twice_from_a_function_are_left():
    # called from a function body: which definition runs depends on when that function is called
    src = PIPE + "def examine(o):\n    print(o[0].at(0))\n\ndef show():\n    pipe = p('d')\n    examine(pipe.run())\n\ndef examine(o):\n    print(o)\n"
    out = convert(src)
    assert "@pipeline_def" in out and "pipeline outputs are passed to examine()" in out


def test_function_body_that_would_differ_between_pipelines_takes_the_form_that_serves_both():
    # .at(i) gives a numpy array on a CPU pipeline, a tensor on a GPU one: np.array(select(i)) for
    # the CPU pipeline alone would not serve the GPU one; the helper that does what at(i) did on
    # either device serves both
    gpu = '@pipeline_def(batch_size=4)\ndef g(root):\n    j, l = fn.readers.file(file_root=root)\n    return fn.decoders.image(j, device="mixed"), l\n\n'
    src = PIPE + gpu + "def first(pipe):\n    print(pipe.run()[0].at(0))\n\na = p('d')\nfirst(a)\nb = g('d')\nfirst(b)\n"
    out = convert(src)
    assert "@pipeline_def" not in out and "print(sample_at(next(pipe)[0], 0))" in out, out


def test_enumerated_outputs_are_batches():
    out = convert(PIPE + "pipe = p('d')\nfor i, out in enumerate(pipe.run()):\n    print(i, out.as_array(), len(out))\n")
    assert "print(i, np.array(ndd.as_tensor(out)), out.batch_size)" in out


def test_class_checks_other_than_tensor_lists_are_left():
    out = convert(PIPE + "pipe = p('d')\nj, l = pipe.run()\nif isinstance(l, (list, tuple)):\n    pass\n")
    assert "@pipeline_def" in out and "compared with (list, tuple), which is not TensorListCPU/TensorListGPU" in out
    out = convert(PIPE + "pipe = p('d')\nj, l = pipe.run()\nprint(type(l).__name__)\n")
    assert "@pipeline_def" in out and "the class of a pipeline output is looked at here" in out


def _run_script(path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_golden_helpers_print_the_same_after_conversion():
    # The golden-run harness runs pipeline functions only; these cases' helpers print what they
    # got, so the scripts themselves are run, pipeline mode against dynamic mode (CPU only).
    import pytest
    from pathlib import Path

    pytest.importorskip("nvidia.dali")
    golden = Path(__file__).parent.parent / "golden"
    for name in ("pipeline_passed_to_function", "pipeline_def_passed_to_function", "sample_as_cpu_numpy",
                 "outputs_shown_by_helper"):
        before = _run_script(golden / f"{name}.py")
        after = _run_script(golden / f"{name}.expected.py")
        assert "Output" in before or "on the CPU" in before or "int32 (3, 4) (4, 3) True" in before
        assert before == after, name


def test_sample_copied_to_the_host_for_numpy():
    out = convert(PIPE + "import numpy as np\npipe = p('d')\nj, l = pipe.run()\na = np.array(l[0].as_cpu())\nb = np.asarray(j[1].as_cpu())\n")
    assert "a = np.array(l.select(0).cpu())" in out and "b = np.asarray(j.select(1).cpu())" in out
    assert "# dali-migrate" not in out


def test_sample_copied_to_the_host_for_other_code_is_left():
    # a TensorCPU is read through __array_interface__, an ndd.Tensor is not
    out = convert(PIPE + "import plotting\npipe = p('d')\nj, l = pipe.run()\nframes = [l[0].as_cpu()]\nplotting.show(frames[0])\n")
    assert "@pipeline_def" in out and "a sample's .as_cpu() gives a TensorCPU" in out
    out = convert(PIPE + "import numpy as np\npipe = p('d')\nj, l = pipe.run()\na = np.array(l[0].as_cpu(), dtype=np.float32)\n")
    assert "@pipeline_def" in out


def test_sample_copied_to_the_host_for_pil_says_the_original_fails():
    # DALI's video zoo example (decode.py): frames = [out[0][0].as_cpu(), ...]; Image.fromarray(frames[0])
    for use in ("frames = [l[0].as_cpu(), l[1].as_cpu()]\nImage.fromarray(frames[1]).save('f.jpg')\n",
                "img = Image.fromarray(l[0].as_cpu())\n"):
        out = convert(PIPE + "from PIL import Image\npipe = p('d')\nj, l = pipe.run()\n" + use)
        assert "@pipeline_def" in out and "goes to PIL's Image.fromarray, which raises" in out
    # another name's [k] is not the list's
    out = convert(PIPE + "from PIL import Image\npipe = p('d')\nj, l = pipe.run()\nframes = [l[0].as_cpu()]\nImage.fromarray(other[0])\n")
    assert "a sample's .as_cpu() gives a TensorCPU" in out


def test_pil_refuses_a_tensor_cpu_and_reads_its_numpy_copy():
    # why the marker above is not a conversion: the copy would succeed where the original raised
    np = pytest.importorskip("numpy")
    image = pytest.importorskip("PIL.Image")
    tensors = pytest.importorskip("nvidia.dali.tensors")
    sample = tensors.TensorListCPU([np.zeros((4, 4, 3), dtype=np.uint8)])[0].as_cpu()
    with pytest.raises(TypeError, match="Cannot handle this data type"):
        image.fromarray(sample)
    assert image.fromarray(np.asarray(sample)).size == (4, 4)


def test_pipeline_given_to_the_pytorch_proxy_says_what_to_do():
    out = convert(PIPE + "import nvidia.dali.plugin.pytorch.experimental.proxy as dali_proxy\n"
                         "server = dali_proxy.DALIServer(p('d', batch_size=2, num_threads=4, device_id=0))\n")
    assert "@pipeline_def" in out and "the pipeline is given to DALIServer (PyTorch proxy), which runs the pipeline object itself" in out


def test_output_copied_into_numpy_under_its_own_name():
    # DALI's video_label_example.py: the name holds the batch, then its NumPy copy
    out = convert(PIPE + "import numpy as np\npipe = p('d')\nfor i in range(3):\n    j, l = pipe.run()\n"
                         "    l = l.as_cpu().as_array()\n    print(l.shape, l[0])\nlast = l[0][0]\n")
    assert "    j, l = next(pipe)\n    l = np.array(ndd.as_tensor(l.cpu()))\n    print(l.shape, l[0])\nlast = l[0][0]\n" in out
    assert "# dali-migrate" not in out


def test_output_copied_only_on_some_paths_is_left():
    out = convert(PIPE + "pipe = p('d')\nj, l = pipe.run()\nif flag:\n    l = l.as_array()\nprint(l.shape)\n")
    assert "@pipeline_def" in out and "a name holding pipeline outputs is also assigned other values here" in out
    # a loop that may stop early: after it, the name may still hold the batch
    out = convert(PIPE + "pipe = p('d')\nfor i in range(3):\n    j, l = pipe.run()\n    if i == n:\n        break\n"
                         "    l = l.as_array()\nprint(l.shape)\n")
    assert "@pipeline_def" in out
    # read at the top of the next round: the copy of the round before
    out = convert(PIPE + "pipe = p('d')\nl = None\nfor i in range(3):\n    print(l)\n    j, l = pipe.run()\n    l = l.as_array()\n")
    assert "@pipeline_def" in out


SHOW = (PIPE + "def show(outputs):\n"
        "    if not isinstance(outputs, tuple):\n        return show((outputs,))\n"
        "    outputs = [out.as_cpu() if hasattr(out, 'as_cpu') else out for out in outputs]\n"
        "    for out in outputs:\n        print(len(out))\n\n"
        "pipe = p('d')\nshow(pipe.run())\n")


def test_helper_copying_outputs_to_the_host_converts():
    out = convert(SHOW)
    assert "    outputs = [out.cpu() for out in outputs]\n" in out
    # never runs on pipeline outputs (always a tuple): left as it is
    assert "    if not isinstance(outputs, tuple):\n        return show((outputs,))\n" in out
    assert "print(out.batch_size)" in out and "# dali-migrate" not in out


def test_helper_rebinding_its_outputs_otherwise_is_left():
    for old, new in [
        ("hasattr(out, 'as_cpu')", "hasattr(out, 'as_array')"),  # another attribute: not always there
        ("[out.as_cpu() if", "[out.as_cpu().as_array() if"),  # not a list of batches
        ("    if not isinstance(outputs, tuple):\n        return show((outputs,))\n",
         "    if not isinstance(outputs, list):\n        return show((outputs,))\n"),  # can run: a call with a tuple
    ]:
        src = SHOW.replace(old, new)
        assert src != SHOW
        assert "@pipeline_def" in convert(src), new


def test_old_method_name_says_what_it_is_now():
    out = convert(PIPE + "pipe = p('d')\nj, l = pipe.run()\nx = j.asCPU().as_array()\n")
    assert "@pipeline_def" in out and "TensorList.asCPU() is the old name of as_cpu()" in out


@pytest.mark.gpu
def test_at_of_a_gpu_batch_gives_the_sample_on_the_gpu(tmp_path, fixture_data):
    """The other half of sample_at: TensorListGPU.at(i) gave a TensorGPU; the converted code gives
    the GPU sample (the labels of the same pipeline stay numpy arrays)."""
    pytest.importorskip("nvidia.dali")
    import numpy as np
    from _modules import load_source

    from dali_migrate.runtime._backend import cuda_device_count

    if cuda_device_count() == 0:
        pytest.skip("no CUDA device")
    src = (
        "import numpy as np\nimport nvidia.dali.fn as fn\nfrom nvidia.dali import pipeline_def\n\n\n"
        "@pipeline_def(batch_size=2, num_threads=1, device_id=0)\ndef g(root):\n"
        "    j, l = fn.readers.file(file_root=root)\n    return fn.decoders.image(j, device='mixed'), l\n\n\n"
        "def first(root):\n    pipe = g(root)\n    pipe.build()\n    imgs, labels = pipe.run()\n"
        "    return imgs.at(1), labels.at(0)\n"
    )
    out = convert(src, header="")
    assert "sample_at(imgs, 1), sample_at(labels, 0)" in out
    root = str(fixture_data / "images")
    (want_img, want_label) = load_source(tmp_path, "original", src).first(root)
    (got_img, got_label) = load_source(tmp_path, "converted", out).first(root)
    assert type(got_label) is type(want_label) is np.ndarray and np.array_equal(got_label, want_label)
    assert got_img.device.device_type == "gpu"
    assert np.array_equal(np.asarray(got_img.cpu()), np.asarray(want_img.as_cpu()))


def test_a_pipeline_given_to_a_name_the_file_never_binds_says_so():
    # FFCV's train_imagenet_dali.py: DALIClassificationIterator is used but never imported there
    src = (
        "from nvidia.dali import fn, pipeline_def\n\n\n"
        "@pipeline_def(batch_size=2, num_threads=1, device_id=None)\n"
        "def p(root):\n    jpegs, labels = fn.readers.file(file_root=root, name='Reader')\n    return jpegs, labels\n\n\n"
        "def loader(root):\n    pipe = p(root)\n    return DALIClassificationIterator(pipe, reader_name='Reader')\n"
    )
    out = convert(src, header="")
    assert "given to DALIClassificationIterator(), a name this file neither defines nor imports" in out, out
    # imported (or defined) under that name: the usual conversion of the iterator
    imported = "from nvidia.dali.plugin.pytorch import DALIClassificationIterator\n" + src
    assert "neither defines nor imports" not in convert(imported, header="")
    # bound some other way (an assignment): the generic marker, no claim about NameError
    bound = src.replace("def loader(root):", "DALIClassificationIterator = list\n\n\ndef loader(root):")
    assert "neither defines nor imports" not in convert(bound, header="")


def test_a_pipeline_given_to_nnablas_dali_iterator_says_what_to_do():
    # Sony's nnabla examples: nnabla-ext-cuda's DaliIterator runs the pipeline object itself
    src = (
        "from nvidia.dali import fn, pipeline_def\n"
        "from nnabla_ext.cuda.experimental import dali_iterator\n\n\n"
        "@pipeline_def(batch_size=2, num_threads=1, device_id=None)\n"
        "def p(root):\n    jpegs, labels = fn.readers.file(file_root=root)\n    return jpegs, labels\n\n\n"
        "def loader(root):\n    pipe = p(root)\n    return dali_iterator.DaliIterator(pipe)\n"
    )
    out = convert(src, header="")
    assert "@pipeline_def" in out
    assert "given to nnabla's DaliIterator (nnabla_ext.cuda.experimental.dali_iterator)" in out, out
    assert "nnabla.utils.dlpack.from_dlpack(ndd.as_tensor(out).__dlpack__())" in out
    # a DaliIterator of another package: the usual marker
    other = src.replace("from nnabla_ext.cuda.experimental import dali_iterator", "import dali_iterator")
    assert "nnabla's DaliIterator" not in convert(other, header="")
    assert "cannot follow" in convert(other, header="")


def test_an_attribute_named_like_the_pipeline_variable_does_not_end_its_uses():
    # `self.pipe = pipe` / `cfg.pipe = ...` bind no variable `pipe`: the uses after them are still
    # the pipeline's (they were skipped, and `pipe.run()` below stayed as written on a generator)
    src = (
        "from nvidia.dali import fn, pipeline_def\n\n\n"
        "@pipeline_def(batch_size=2, num_threads=1, device_id=None)\n"
        "def p(root):\n    jpegs, labels = fn.readers.file(file_root=root)\n    return jpegs, labels\n\n\n"
        "def first(root, cfg):\n    pipe = p(root)\n    pipe.build()\n    cfg.pipe = 'files'\n"
        "    return pipe.run()\n"
    )
    out = convert(src, header="")
    assert "return next(pipe)" in out and "pipe.run()" not in out, out
    # the pipeline itself stored on an attribute: a use dali-migrate cannot follow
    stored = src.replace("cfg.pipe = 'files'", "cfg.pipe = pipe")
    out = convert(stored, header="")
    assert "@pipeline_def" in out and "the pipeline object `pipe` is used by `cfg.pipe = pipe`" in out, out


CHANGED_COPIES = """\
import numpy as np
from nvidia.dali import fn, pipeline_def


@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def p(root):
    jpegs, labels = fn.readers.file(file_root=root)
    return fn.decoders.image(jpegs, device="cpu"), labels


def edited(root):
    pipe = p(root)
    pipe.build()
    out = pipe.run()
    first = out[0].at(0)
    first[0] = 255
    labels = out[1].as_array()
    labels += 100
    return int(out[0].at(0)[0].sum()), out[1].as_array().ravel().tolist()
"""


def test_at_and_as_array_give_copies_as_in_pipeline_mode(tmp_path, fixture_data):
    """TensorList.at(i) and as_array() copy: changing what they gave leaves the batch as it was."""
    from _helpers import run_both

    out = convert(CHANGED_COPIES)
    assert "first = np.array(out[0].select(0))" in out and "labels = np.array(ndd.as_tensor(out[1]))" in out
    want, got = run_both(tmp_path, CHANGED_COPIES, out, "edited", str(fixture_data / "images"))
    assert want == got and max(want[1]) < 100


def test_output_named_like_an_operator_the_pipeline_calls_is_no_closure():
    # `fn.shapes(...)` in the pipeline spells `shapes` as an attribute: it does not read the
    # variable `shapes` that holds an output at the call site, so the pipeline converts
    out = convert(
        '@pipeline_def(batch_size=4)\ndef p(root):\n    j, l = fn.readers.file(file_root=root, name="R")\n'
        "    return j, fn.shapes(j)\n\n"
        "pipe = p('d')\njpegs, shapes = pipe.run()\nprint(shapes.at(0))\n"
    )
    assert "dali-migrate:" not in out
    assert "jpegs, shapes = next(pipe)" in out


def test_closure_reading_the_outputs_still_stops_the_conversion():
    out = convert(
        PIPE + "pipe = p('d')\nj, l = pipe.run()\n\ndef show():\n    print(l)\n"
    )
    assert "a nested function uses the pipeline `pipe` or its outputs" in out


@pytest.mark.parametrize("use", [
    "shapes = [b.at(0).shape for b in (j1, j2)]",
    "for b in [j1, j2]:\n    print(b.at(0))",
    "pair = (j1, j2)\nfirst = pair[0].at(0)",
    "named = {'a': j1}\nfirst = named['a'].at(0)",
])
def test_outputs_put_in_a_container_and_used_there_keep_the_pipeline(use):
    # what is done with them there would stay as written: TensorList methods on an ndd.Batch
    out = convert(PIPE + "pipe = p('d')\nj1, l1 = pipe.run()\nj2, l2 = pipe.run()\n" + use + "\n")
    assert "@pipeline_def" in out and "are put in `" in out and "which dali-migrate does not follow" in out


def test_outputs_in_a_tuple_given_to_a_call_still_convert():
    out = convert(PIPE + "pipe = p('d')\nj, l = pipe.run()\nprint((j, l))\n")
    assert "@pipeline_def" not in out and "dali-migrate:" not in out


def test_a_slice_of_the_outputs_is_outputs_still_and_their_samples_convert():
    out = convert(PIPE + "pipe = p('d')\nout = pipe.run()\nrest = out[1:]\nfirst = [o for o in out[:1]]\n"
                         "x = rest[0].at(0)\ny = first[0].at(0)\n")
    assert "x = np.array(rest[0].select(0))" in out and "y = np.array(first[0].select(0))" in out
    assert "dali-migrate:" not in out


def test_each_output_a_comprehension_iterates_is_a_batch_whose_uses_convert():
    # (it once stayed as written, unmarked: TensorList methods on each ndd.Batch)
    out = convert(PIPE + "pipe = p('d')\nout = pipe.run()\nsamples = [o.at(0) for o in out]\n"
                         "host = [o.as_cpu().at(1) if hasattr(o, 'as_cpu') else o.at(1) for o in out]\n")
    assert "samples = [np.array(o.select(0)) for o in out]" in out
    assert "host = [np.array(o.cpu().select(1)) if True else np.array(o.select(1)) for o in out]" in out
    assert "dali-migrate:" not in out
    # the comprehension's name also holding something else cannot be followed by name
    clash = convert(PIPE + "pipe = p('d')\nout = pipe.run()\nsamples = [o.at(0) for o in out]\no = 3\n")
    assert "a name holding pipeline outputs is also assigned other values here" in clash


def test_a_pipeline_returning_tuple_of_a_list_gives_each_item_as_an_output():
    out = convert("@pipeline_def(batch_size=4)\ndef p(root):\n    j, l = fn.readers.file(file_root=root)\n"
                  "    return tuple([j] + [l])\n")
    assert "outputs = tuple([j] + [l])" in out and "dali-migrate:" not in out
    shadowed = convert("@pipeline_def(batch_size=4)\ndef p(root, tuple):\n    j, l = fn.readers.file(file_root=root)\n"
                       "    return tuple([j] + [l])\n")
    assert "is one output or several" in shadowed


def test_a_choice_between_outputs_is_an_output_and_a_choice_with_anything_else_is_marked():
    out = convert(PIPE + "pipe = p('d')\nout = pipe.run()\nx = out[0] if flag else out[1]\nprint(x.at(0))\n"
                         "print((out[1] if flag else out[0]).at(1))\n")
    assert "print(np.array(x.select(0)))" in out and "print(np.array((out[1] if flag else out[0]).select(1)))" in out
    assert "dali-migrate:" not in out
    mixed = convert(PIPE + "pipe = p('d')\nout = pipe.run()\nx = out if flag else None\nprint(x[0].at(0))\n")
    assert "pipeline outputs are one arm of `out if flag else None`, whose other arm is not the same kind" in mixed


def test_iterating_a_tensorlist_is_marked():
    # its samples were TensorCPU objects; an ndd.Batch's are ndd.Tensor (DALI's conditionals
    # notebook then called .as_cpu() on each, an AttributeError once converted)
    for use in ("for s in l:\n    print(s.shape())\n", "pairs = list(enumerate(l))\n", "firsts = [s for s in l]\n"):
        out = convert(PIPE + "pipe = p('d')\nj, l = pipe.run()\n" + use)
        assert "a TensorList is iterated here" in out, use
        assert "@pipeline_def" in out


def test_a_function_shown_a_cpu_and_a_gpu_pipelines_outputs_takes_samples_the_way_both_take():
    # DALI's brightness/contrast notebook: display() of a CPU pipeline's and of a GPU one's outputs
    out = convert(
        "@pipeline_def(batch_size=2)\ndef on_cpu(root):\n    f, l = fn.readers.file(file_root=root)\n"
        "    return fn.decoders.image(f), l\n\n"
        "@pipeline_def(batch_size=2)\ndef on_gpu(root):\n    f, l = fn.readers.file(file_root=root)\n"
        "    return fn.decoders.image(f, device='mixed'), l\n\n"
        "def display(output):\n    print(output[0].at(1))\n\n"
        "a = on_cpu('d', device_id=0)\na.build()\ndisplay(a.run())\n"
        "b = on_gpu('d', device_id=0)\nb.build()\ndisplay(b.run())\n")
    assert "    print(sample_at(output[0], 1))\n" in out
    assert "def sample_at(batch, i):" in out and "dali-migrate:" not in out


def test_iterating_a_tensorlist_only_to_give_each_sample_to_numpy_converts():
    # numpy reads the same values from a TensorCPU as from an ndd.Tensor
    out = convert(PIPE + "import numpy as np\npipe = p('d')\nj, l = pipe.run()\nshapes = [np.asarray(t).shape for t in l]\n"
                         "for s in j:\n    print(np.array(s).sum())\n")
    assert "dali-migrate:" not in out and "shapes = [np.asarray(t).shape for t in l]" in out


def test_hasattr_of_a_tensorlist_keeps_its_answer():
    # every TensorList has as_cpu(); an ndd.Batch has not: the guarded copy would be skipped
    out = convert(PIPE + "pipe = p('d')\nj, l = pipe.run()\nif hasattr(l, 'as_cpu'):\n    l = l.as_cpu()\nprint(l.at(0))\n")
    assert "if True:\n    l = l.cpu()\n" in out and "dali-migrate:" not in out
    other = convert(PIPE + "pipe = p('d')\nj, l = pipe.run()\nprint(hasattr(l, 'at'))\n")
    assert "`hasattr(l, 'at')` asks a TensorList for an attribute" in other


def test_a_functions_own_comprehension_name_is_no_read_of_a_tracked_one():
    # DALI's color-space notebook: `elem` picks outputs at module level, and a function of the
    # file spells `elem` in a comprehension of its own
    out = convert(PIPE + "pipe = p('d')\nout = pipe.run()\nfirst = [elem for elem in out[:1]]\n\n"
                         "def titles(names):\n    return [elem + '!' for elem in names]\n\nprint(first[0].at(0), titles(['a']))\n")
    assert "dali-migrate:" not in out and "np.array(first[0].select(0))" in out
