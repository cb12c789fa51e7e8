from _helpers import convert

PIPE = '@pipeline_def(batch_size=4)\ndef p(root):\n    j, l = fn.readers.file(file_root=root, name="R")\n    return j, l\n\n'


def test_build_removed_run_becomes_next():
    out = convert(PIPE + 'pipe = p("d", prefetch_queue_depth=3)\npipe.build()\nout = pipe.run()\n')
    assert 'pipe = p("d")\nout = next(pipe)\n' in out


def test_tensorlist_methods():
    out = convert(PIPE + "import numpy as np\npipe = p('d')\nj, l = pipe.run()\nx = l.at(0)\ny = j.as_cpu()\nz = l.as_array()\nn = len(l)\nw = l[1]\nt = l.as_tensor()\ns = l.shape()\n")
    for expected in ["l.select(0)", "j.cpu()", "np.asarray(ndd.as_tensor(l))", "n = l.batch_size", "w = l.select(1)", "t = ndd.as_tensor(l)", "s = l.shape\n"]:
        assert expected in out, expected


def test_outputs_tuple_indexing():
    out = convert(PIPE + "pipe = p('d')\nout = pipe.run()\nx = out[1].at(0)\n")
    assert "x = out[1].select(0)" in out


def test_epoch_size_substitutes_call_arguments():
    out = convert(PIPE + "pipe = p(args.root)\nn = pipe.epoch_size('R')\n")
    assert 'n = ndd.readers.File(file_root=args.root).get_metadata()["epoch_size_padded"]' in out


def test_pipeline_passed_to_iterator_is_left_with_markers():
    out = convert(PIPE + "from nvidia.dali.plugin.pytorch import DALIGenericIterator\npipe = p('d')\nit = DALIGenericIterator(pipe, ['a', 'b'])\n")
    assert "@pipeline_def" in out
    assert "# dali-migrate: [call-site] the pipeline object `pipe` is used here" in out


def test_unknown_method_blocks():
    out = convert(PIPE + "pipe = p('d')\npipe.reset()\n")
    assert "pipe.reset() has no automatic dynamic-mode conversion" in out and "@pipeline_def" in out


def test_shared_output_names_convert_together():
    src = PIPE.replace("def p", "def q") + PIPE + "a = p('d')\nb = q('e')\nx, y = a.run()\nx, y = b.run()\nprint(y.at(0))\n"
    out = convert(src)
    assert "next(a)" in out and "next(b)" in out and "y.select(0)" in out
