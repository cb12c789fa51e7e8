"""rules/constant.py: fn.constant and types.Constant become the values a pipeline has, written for
where they are used (golden-run case constant_values proves each form against a pipeline)."""

import pytest
from _helpers import convert, pipeline

READ = "j, labels = fn.readers.file(file_root='d')\nimages = fn.decoders.image(j)\n"
NUMPY = "import numpy as np\nimport nvidia.dali.fn as fn\nimport nvidia.dali.types as types\nfrom nvidia.dali import pipeline_def\n"


def _np(body: str) -> str:
    return convert(body, header=NUMPY)


def _marker(out: str) -> str:
    return "\n".join(line for line in out.splitlines() if line.startswith("# dali-migrate:"))


def test_scalar_in_arithmetic_becomes_the_literal_of_its_type():
    out = pipeline(READ + "return images * types.Constant(2.0), types.Constant(3) + labels, labels == types.Constant(True)\n")
    assert "images * 2.0, 3 + labels, labels == True" in out and "types" not in out.split("def p")[1]


def test_dtype_given_as_the_literal_type_is_coerced():
    out = pipeline(READ + "return images * types.Constant(2, dtype=types.FLOAT), labels + types.Constant(2.7, dtype=types.INT32)\n")
    assert "images * 2.0, labels + 2" in out


def test_other_dtypes_become_typed_tensors():
    out = pipeline(READ + "return labels * types.Constant(3, dtype=types.INT64), images - types.Constant(10, dtype=types.UINT8)\n")
    assert "labels * ndd.tensor(3, dtype=ndd.int64), images - ndd.tensor(10, dtype=ndd.uint8)" in out


def test_typed_tensor_in_a_gpu_pipeline_is_marked():
    out = pipeline("j, labels = fn.readers.file(file_root='d')\nimages = fn.decoders.image(j, device='mixed')\n"
                   "return images * types.Constant(3, dtype=types.INT64)\n")
    assert "@pipeline_def" in out and "Cannot mix GPU and CPU inputs" in _marker(out)


def test_literal_scalar_in_a_gpu_pipeline_converts():
    out = pipeline("j, labels = fn.readers.file(file_root='d')\nimages = fn.decoders.image(j, device='mixed')\n"
                   "return images * types.Constant(0.5)\n")
    assert "images * 0.5" in out and "# dali-migrate" not in out


def test_array_in_arithmetic_becomes_a_python_list():
    out = _np("@pipeline_def(batch_size=4)\ndef p():\n    j, l = fn.readers.file(file_root='d')\n"
                  "    images = fn.decoders.image(j, device='mixed')\n"
                  "    return images * types.Constant(np.float32([1.25, 0.75, 0.5]))\n")
    assert "images * [1.25, 0.75, 0.5]" in out and "# dali-migrate" not in out


def test_float64_array_is_float32_and_int64_array_int32():
    out = _np("@pipeline_def(batch_size=4)\ndef p():\n"
                  "    return types.Constant(np.array([0.1, 2.0])), types.Constant(np.array([[1, 2], [3, 4]]))\n")
    assert "ndd.tensor([0.10000000149011612, 2.0], dtype=ndd.float32)" in out
    assert "ndd.tensor([[1, 2], [3, 4]], dtype=ndd.int32)" in out


def test_int64_array_that_does_not_fit_int32_is_marked():
    out = _np("@pipeline_def(batch_size=4)\ndef p():\n    return types.Constant(np.array([3000000000]))\n")
    assert "does not fit INT32" in _marker(out)


def test_fn_constant_is_a_batch_of_equal_samples():
    out = pipeline("return fn.constant(idata=[1, 2, 3, 4], shape=[2, 2], dtype=types.UINT8, layout='HW')\n")
    assert 'ndd.Batch.broadcast(ndd.tensor([[1, 2], [3, 4]], dtype=ndd.uint8, layout="HW"), batch_size)' in out


def test_fn_constant_defaults_float32_or_int32_and_a_1d_shape():
    out = pipeline("return fn.constant(fdata=0.5), fn.constant(idata=3), fn.constant(idata=3, shape=[])\n")
    assert "ndd.tensor([0.5], dtype=ndd.float32)" in out
    assert "ndd.tensor([3], dtype=ndd.int32)" in out and "ndd.tensor(3, dtype=ndd.int32)" in out


def test_value_broadcast_to_a_large_shape_uses_full():
    out = pipeline("return fn.constant(fdata=1.0, shape=[8, 8, 3], layout='HWC', device='gpu')\n")
    assert ('ndd.Batch.broadcast(ndd.full(ndd.tensor(1.0, dtype=ndd.float32), shape=[8, 8, 3], layout="HWC"), '
            'batch_size, device="gpu")') in out


def test_values_the_type_does_not_hold_exactly_are_marked():
    for call, why in [
        ("fn.constant(fdata=[1.5], dtype=types.INT32)", "not a whole number"),
        ("fn.constant(idata=[300], dtype=types.UINT8)", "does not fit UINT8"),
        ("fn.constant(idata=[16777217], dtype=types.FLOAT)", "not exactly a FLOAT"),
        ("fn.constant(fdata=[0.1], dtype=types.FLOAT16)", "not exactly a FLOAT16"),
        ("fn.constant(idata=[2], dtype=types.BOOL)", "not 0 or 1"),
        ("fn.constant(fdata=[1.0], dtype=types.FLOAT64)", "does not support FLOAT64"),
        ("fn.constant(idata=[1, 2, 3], shape=[2, 2])", "do not fill the shape"),
        ("fn.constant(idata=[1, 2], layout='HW')", "does not match"),
        ("types.Constant(0.1, dtype=types.FLOAT64) * fn.random.uniform()", "as float32, not as FLOAT64"),
    ]:
        out = pipeline(f"return {call}\n")
        assert "@pipeline_def" in out and why in _marker(out), call


def test_non_literal_values_are_marked():
    out = pipeline("v = [1, 2]\nreturn fn.constant(idata=v)\n")
    assert "fn.constant(...) not converted: its value is not a literal" in _marker(out)


def test_scalar_argument_becomes_its_value():
    out = pipeline(READ + "return fn.rotate(images, angle=types.Constant(30, dtype=types.FLOAT))\n")
    assert "ndd.rotate(images, angle=30.0)" in out


def test_constant_node_argument_and_input_are_batches():
    out = pipeline(READ + "return fn.rotate(images, angle=fn.constant(fdata=90.0, shape=[])), fn.cat(labels, types.Constant([7]))\n")
    assert "angle=ndd.Batch.broadcast(ndd.tensor(90.0, dtype=ndd.float32), batch_size)" in out
    assert "ndd.cat(labels, ndd.Batch.broadcast(ndd.tensor([7], dtype=ndd.int32), batch_size))" in out


def test_scalar_output_is_a_0d_batch():
    out = pipeline(READ + "return labels, types.Constant(7)\n")
    assert "labels, ndd.Batch.broadcast(ndd.tensor(7, dtype=ndd.int32), batch_size)" in out


def test_constant_with_only_constants_beside_it_is_a_batch():
    # A Python list times 2 would repeat the list; the pipeline multiplies a batch.
    out = pipeline("return fn.constant(idata=[1, 2]) * 2\n")
    assert "ndd.Batch.broadcast(ndd.tensor([1, 2], dtype=ndd.int32), batch_size) * 2" in out


def test_scalar_beside_no_data_is_marked():
    out = pipeline("return types.Constant(2.0) * fn.constant(fdata=[1.0])\n")
    assert "needs a DALI operand beside it" in _marker(out)


def test_negative_base_of_a_power_keeps_its_sign():
    out = pipeline(READ + "return types.Constant(-2.5) ** labels\n")
    assert "(-2.5) ** labels" in out


def test_named_scalar_follows_its_uses():
    out = pipeline(READ + "scale = types.Constant(0.5)\nreturn images * scale + scale, fn.rotate(images, angle=scale)\n")
    assert "scale = 0.5\n" in out and "# dali-migrate" not in out
    out = pipeline(READ + "offset = types.Constant(3, dtype=types.INT64)\nreturn labels + offset, offset\n")
    assert "offset = ndd.Batch.broadcast(ndd.tensor(3, dtype=ndd.int64), batch_size)" in out


def test_named_constant_used_as_argument_and_operand_is_marked():
    out = pipeline(READ + "k = types.Constant(3, dtype=types.INT64)\nreturn labels + k, fn.rotate(images, angle=k)\n")
    assert "is an operator argument (a plain value there) and also used as data" in _marker(out)


def test_named_constant_assigned_twice_is_marked():
    out = pipeline(READ + "k = types.Constant(2.0)\nk = types.Constant(3.0)\nreturn images * k\n")
    assert "assigned more than once" in _marker(out)


def test_constant_used_elsewhere_is_marked():
    out = pipeline(READ + "pair = [types.Constant(1.0), labels]\nreturn images, labels\n")
    assert "used where this rule cannot follow its value" in _marker(out)


def test_external_source_pipeline_batches_are_marked():
    out = pipeline("x = fn.external_source(source=lambda i: [1, 2], batch=True)\nreturn x, fn.constant(idata=[1])\n")
    assert "follows the external source's batches" in _marker(out)


def test_scalar_constant_class_stays_marked():
    out = pipeline(READ + "return labels * types.ScalarConstant(2)\n")
    assert "types.ScalarConstant(...) has no dynamic-mode counterpart" in _marker(out)


def test_imported_constant_function_and_unused_types_import_dropped():
    out = convert("from nvidia.dali import fn, pipeline_def\nfrom nvidia.dali.types import Constant\n"
                  "@pipeline_def(batch_size=2)\ndef p():\n    j, l = fn.readers.file(file_root='d')\n    return l * Constant(2)\n")
    assert "l * 2" in out and "import Constant" not in out


def test_named_literal_scalar_returned_is_a_batch_and_in_a_gpu_pipeline_marked():
    out = pipeline(READ + "k = types.Constant(2.0)\nreturn images * k, k\n")
    assert "k = ndd.Batch.broadcast(ndd.tensor(2.0, dtype=ndd.float32), batch_size)" in out
    out = pipeline("j, labels = fn.readers.file(file_root='d')\nimages = fn.decoders.image(j, device='mixed')\n"
                   "k = types.Constant(2.0)\nreturn images * k, k\n")
    assert "Cannot mix GPU and CPU inputs" in _marker(out)


def test_disabled_rule_blocks_instead_of_leaving_the_constant():
    from _helpers import HEADER

    out = convert("@pipeline_def(batch_size=2)\ndef p():\n    return fn.constant(idata=[1])\n", header=HEADER,
                  rules={"pipeline-def", "op-name", "batch-size"})
    assert "@pipeline_def" in out and "needs rule constant, which is disabled" in out


def _named(top: str, body: str) -> str:
    """A module that binds arrays at its top (``top``) and a pipeline returning ``body``."""
    return _np(top + "\n\n@pipeline_def(batch_size=2)\ndef p():\n    return " + body + "\n")


def test_named_int64_array_and_arithmetic_on_it_are_its_values_as_int32():
    out = _named("arr = np.array([[1, 2], [3, 4]])",
                 "types.Constant(arr), types.Constant(arr + 100), types.Constant(2 * arr), types.Constant(10 - arr)")
    assert "# dali-migrate" not in out
    for values in ("[[1, 2], [3, 4]]", "[[101, 102], [103, 104]]", "[[2, 4], [6, 8]]", "[[9, 8], [7, 6]]"):
        assert f"ndd.Batch.broadcast(ndd.tensor({values}, dtype=ndd.int32), batch_size)" in out
    # the binding stays: the converted code no longer reads it, other code of the file may
    assert "arr = np.array([[1, 2], [3, 4]])" in out


def test_named_float64_array_is_computed_in_float64_then_float32():
    # int64 * float is float64 in numpy; DALI then takes it as float32
    np = pytest.importorskip("numpy")
    out = _named("w = np.array([0.1, 0.5])\nn = np.array([1, 3])", "types.Constant(w * 3 - 0.5), types.Constant(n * 0.1)")
    for array in (np.array([0.1, 0.5]) * 3 - 0.5, np.array([1, 3]) * 0.1):
        written = [float(v) for v in array.astype(np.float32)]
        assert f"ndd.tensor({written!r}, dtype=ndd.float32)" in out


def test_named_array_of_a_given_dtype_keeps_it_without_arithmetic():
    out = _named("mask = np.array([1, 0, 1], dtype=np.uint8)", "types.Constant(mask)")
    assert "ndd.tensor([1, 0, 1], dtype=ndd.uint8)" in out
    out = _named("mask = np.array([1, 0, 1], dtype=np.uint8)", "types.Constant(mask + 1)")
    assert "arithmetic on an array of UINT8, whose result type differs between numpy versions" in _marker(out)


def test_named_array_used_elsewhere_is_marked():
    # any other use might change the array between its binding and types.Constant(...)
    for use in ("arr[0] = 7", "print(arr)", "scale(arr)", "arr.fill(0)"):
        out = _named("arr = np.array([1, 2])\n" + use, "types.Constant(arr)")
        assert "@pipeline_def" in out
        assert "`arr` is used elsewhere in the file" in _marker(out), use
    out = _named("arr = np.array([1, 2])\ndef show():\n    print(arr)", "types.Constant(arr)")
    assert "`arr` is used elsewhere in the file (`print(arr)`)" in _marker(out)


def test_named_array_bound_twice_or_in_the_pipeline_is_marked():
    for again in ("arr = np.array([3, 4])", "arr += 1", "for arr in []: pass"):
        out = _named("arr = np.array([1, 2])\n" + again, "types.Constant(arr)")
        assert "its value `arr` is not bound once, at the top of the file" in _marker(out), again
    out = _np("@pipeline_def(batch_size=2)\ndef p(arr):\n    return types.Constant(arr)\n")
    assert "its value `arr` is not bound once, at the top of the file" in _marker(out)


def test_named_array_not_of_literal_values_says_how_to_convert_it():
    out = _named("arr = np.arange(4)", "types.Constant(arr)")
    marker = _marker(out)
    assert "its value `arr` is not a numpy array of literal values (`arr = np.arange(4)`)" in marker
    assert "ndd.Batch.broadcast(ndd.tensor(<copy>), batch_size)" in marker


def test_named_array_that_does_not_fit_int32_or_int64_is_marked():
    out = _named("arr = np.array([3000000000])", "types.Constant(arr)")
    assert "does not fit INT32" in _marker(out)
    out = _named("arr = np.array([9223372036854775807])", "types.Constant(arr + 1)")
    assert "`arr + 1` overflows int64" in _marker(out)


def test_named_array_with_too_many_values_is_marked():
    out = _named("arr = np.array([" + ", ".join(["1"] * 1025) + "])", "types.Constant(arr)")
    assert "holds more than 1024 values" in _marker(out)


# -- ScalarConstant's type methods: types.Constant(15).float32() (constant_typed_scalar runs them) --


def test_type_method_gives_the_scalar_of_that_type():
    out = pipeline(READ + "return types.Constant(15).float32() - labels, images * types.Constant(2).uint8(), images // types.Constant(2.75).int32()\n")
    assert "15.0 - labels, images * ndd.tensor(2, dtype=ndd.uint8), images // 2" in out
    assert ".float32()" not in out and ".uint8()" not in out


def test_type_method_in_parentheses_and_as_an_argument():
    out = pipeline(READ + "angle = types.Constant(90).float32()\nreturn fn.rotate(images, angle=angle), (types.Constant(1).float64()) / images\n")
    assert "angle = 90.0\n" in out and "ndd.rotate(images, angle=angle)" in out
    assert "(ndd.tensor(1.0, dtype=ndd.float64)) / images" in out


def test_type_method_of_a_constant_node_is_marked():
    # types.Constant of a list is a DataNode: it has no float32()
    out = pipeline(READ + "return images * types.Constant([1, 2, 3]).float32()\n")
    assert "@pipeline_def" in out and "`.float32()` of a constant node" in _marker(out)


def test_type_method_stays_in_the_loop():
    # a method of what a DALI call made is no Python value to evaluate once before the loop
    out = pipeline(READ + "return labels * types.Constant(3).int64()\n")
    assert "evaluated once" not in out and "labels * ndd.tensor(3, dtype=ndd.int64)" in out
