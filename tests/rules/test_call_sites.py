from _helpers import convert

PIPE = '@pipeline_def(batch_size=4)\ndef p(root):\n    j, l = fn.readers.file(file_root=root, name="R")\n    return j, l\n\n'


def test_build_removed_run_becomes_next():
    out = convert(PIPE + 'pipe = p("d", prefetch_queue_depth=3)\npipe.build()\nout = pipe.run()\n')
    assert 'pipe = p("d")\nout = next(pipe)\n' in out


def test_tensorlist_methods():
    out = convert(PIPE + "import numpy as np\npipe = p('d')\nj, l = pipe.run()\nx = l.at(0)\ny = j.as_cpu()\nz = l.as_array()\nn = len(l)\nw = l[1]\nt = l.as_tensor()\ns = l.shape()\n")
    for expected in ["x = np.asarray(l.select(0))", "j.cpu()", "np.asarray(ndd.as_tensor(l))", "n = l.batch_size", "w = l.select(1)", "t = ndd.as_tensor(l)", "s = l.shape\n"]:
        assert expected in out, expected


def test_outputs_tuple_indexing():
    out = convert(PIPE + "pipe = p('d')\nout = pipe.run()\nx = out[1].at(0)\n")
    # a CPU TensorList's at(i) was a numpy array: it stays one
    assert "x = np.asarray(out[1].select(0))" in out
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
    out = convert(PIPE + "pipe = p('d')\npipe.reset()\n")
    assert "pipe.reset() has no automatic dynamic-mode conversion" in out and "@pipeline_def" in out


def test_shared_output_names_convert_together():
    src = PIPE.replace("def p", "def q") + PIPE + "a = p('d')\nb = q('e')\nx, y = a.run()\nx, y = b.run()\nprint(y.at(0))\n"
    out = convert(src)
    assert "next(a)" in out and "next(b)" in out and "y.select(0)" in out


def test_gpu_batch_at_stays_a_tensor():
    src = (
        '@pipeline_def(batch_size=4)\ndef g(root):\n    j, l = fn.readers.file(file_root=root)\n'
        '    return fn.decoders.image(j, device="mixed"), l\n\n'
        "pipe = g('d')\nimgs, labels = pipe.run()\na = imgs.at(0)\nb = labels.as_cpu().at(0)\n"
    )
    out = convert(src)
    assert "a = imgs.select(0)" in out
    assert "b = np.asarray(labels.cpu().select(0))" in out


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
