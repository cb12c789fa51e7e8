from _helpers import pipeline


def test_fn_call_becomes_ndd_call():
    out = pipeline("x = fn.random.uniform(range=[0, 1])\nreturn fn.flip(x)\n")
    assert "ndd.flip(x)" in out and "fn." not in out


def test_deprecated_alias_uses_replacement():
    out = pipeline("j, l = fn.file_reader(file_root='d')\nreturn fn.image_decoder(j), l\n")
    assert "ndd.readers.File(file_root='d')" in out
    assert "ndd.decoders.image(j)" in out


def test_moved_experimental_operator():
    out = pipeline("j, l = fn.readers.file(file_root='d')\nreturn fn.experimental.equalize(fn.decoders.image(j))\n")
    assert "ndd.equalize(ndd.decoders.image(j))" in out


def test_operator_without_counterpart_blocks_the_pipeline():
    out = pipeline("x = fn.dl_tensor_python_function(fn.random.uniform(), function=abs)\nreturn x\n")
    assert "@pipeline_def" in out
    assert "# dali-migrate: [pipeline-def] pipeline not converted: fn.dl_tensor_python_function has no dynamic-mode counterpart" in out


def test_unknown_operator_blocks():
    out = pipeline("return fn.no_such_op()\n")
    assert "fn.no_such_op is not a DALI" in out and "@pipeline_def" in out
