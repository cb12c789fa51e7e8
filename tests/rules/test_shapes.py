"""rules/shapes.py: fn.shapes(x) becomes ndd.as_batch(x.shape, dtype=...) (golden-run case shapes_run)."""

from _helpers import pipeline

READ = "j, labels = fn.readers.file(file_root='d')\nimages = fn.decoders.image(j)\n"


def test_default_dtype_is_int64():
    out = pipeline(READ + "return fn.shapes(images)\n")
    assert "(ndd.as_batch(images.shape, dtype=ndd.int64),)" in out


def test_dtype_and_its_deprecated_alias_are_kept():
    out = pipeline(READ + "return fn.shapes(images, dtype=types.INT32), fn.shapes(images, type=types.FLOAT)\n")
    assert "ndd.as_batch(images.shape, dtype=types.INT32), ndd.as_batch(images.shape, dtype=types.FLOAT)" in out


def test_input_expression_is_converted_and_parenthesized():
    out = pipeline(READ + "return fn.shapes(fn.resize(images, resize_x=4)), fn.shapes(images + 1)\n")
    assert "ndd.as_batch(ndd.resize(images, resize_x=4).shape, dtype=ndd.int64)" in out
    assert "ndd.as_batch((images + 1).shape, dtype=ndd.int64)" in out


def test_in_a_gpu_pipeline_the_result_goes_to_the_input_device():
    # A pipeline runs fn.shapes of a GPU input on the GPU: its output is there (DALI 2.4, H100).
    out = pipeline("j, labels = fn.readers.file(file_root='d')\nimages = fn.decoders.image(j, device='mixed')\n"
                   "return fn.shapes(images)\n")
    assert "ndd.as_batch(images.shape, dtype=ndd.int64, device=images.device)" in out
    out = pipeline(READ + "return fn.shapes(images.gpu())\n")
    assert "@pipeline_def" in out and "assign the input to a name first" in out


def test_device_written_is_where_the_result_goes():
    # The operator runs on device= and its input must be there (else the pipeline fails): the
    # output is on that device, whatever the input expression (ops.Shapes(device="gpu") in
    # XiaotaoChen's COCO pipeline, ops.Shapes(device=self.device) in MLPerf's RNN-T).
    gpu = "j, labels = fn.readers.file(file_root='d')\nimages = fn.decoders.image(j, device='mixed')\n"
    out = pipeline(gpu + "return fn.shapes(images, device='gpu'), fn.shapes(images * 2, device='gpu')\n")
    assert "ndd.as_batch(images.shape, dtype=ndd.int64, device='gpu')" in out
    assert "ndd.as_batch((images * 2).shape, dtype=ndd.int64, device='gpu')" in out
    out = pipeline(READ + "return fn.shapes(images, device='cpu', dtype=types.INT32)\n")
    assert "ndd.as_batch(images.shape, dtype=types.INT32, device='cpu')" in out
    out = pipeline(READ + "return fn.shapes(images, device=DEVICE)\n")
    assert "ndd.as_batch(images.shape, dtype=ndd.int64, device=DEVICE)" in out
    out = pipeline(READ + "return fn.shapes(images, device='mixed')\n")
    assert "@pipeline_def" in out and "fn.shapes not converted: device='mixed'" in out


def test_dtype_the_pipeline_rejects_is_marked():
    out = pipeline(READ + "return fn.shapes(images, dtype=types.UINT8)\n")
    assert "does not accept dtype=types.UINT8" in out and "@pipeline_def" in out
