"""rules/python_function.py: a CPU python_function becomes the same calls of the function on NumPy
arrays (golden-run cases python_function and python_function_run prove the forms)."""

from _helpers import convert, pipeline

READ = "j, labels = fn.readers.file(file_root='d')\nimages = fn.decoders.image(j)\n"


def _marker(out: str) -> str:
    return "\n".join(line for line in out.splitlines() if line.startswith("# dali-migrate:"))


def test_per_sample_call_and_numpy_import_added():
    out = pipeline(READ + "return fn.python_function(images, function=invert, output_layouts='HWC')\n")
    assert ('ndd.as_batch([np.asarray(invert(np.asarray(sample)), order="C") for sample in images], '
            "layout='HWC')") in out
    assert "import numpy as np\n" in out


def test_existing_numpy_name_is_used_and_a_taken_np_avoided():
    out = convert("@pipeline_def(batch_size=2)\ndef p():\n    j, l = fn.readers.file(file_root='d')\n"
                  "    return fn.python_function(j, function=len)\n", header="import numpy as onp\n" + _HEADER)
    assert "onp.asarray(len(onp.asarray(sample))" in out and "import numpy as np" not in out
    out = convert("np = 3\n@pipeline_def(batch_size=2)\ndef p():\n    j, l = fn.readers.file(file_root='d')\n"
                  "    return fn.python_function(j, function=len)\n")
    assert "import numpy as numpy_\n" in out and "numpy_.asarray(len(numpy_.asarray(sample))" in out


_HEADER = "import nvidia.dali.fn as fn\nfrom nvidia.dali import pipeline_def\n"


def test_several_inputs_are_zipped():
    out = pipeline(READ + "return fn.python_function(images, labels, function=mix)\n")
    assert ("mix(np.asarray(images_sample), np.asarray(labels_sample)), order=\"C\") "
            "for images_sample, labels_sample in zip(images, labels)]") in out


def test_batch_processing_passes_lists():
    out = pipeline(READ + "return fn.python_function(images, function=per_batch, batch_processing=True)\n")
    assert ('ndd.as_batch([np.asarray(out, order="C") for out in per_batch([np.asarray(sample) for sample in images])])'
            in out)


def test_several_outputs_are_transposed_with_their_layouts():
    out = pipeline(READ + "a, b = fn.python_function(images, function=split, num_outputs=2, output_layouts=['HW', 'C'])\n"
                   "return a, b\n")
    assert ("a, b = [ndd.as_batch([np.asarray(out, order=\"C\") for out in output], layout=layout) "
            "for output, layout in zip(zip(*[split(np.asarray(sample)) for sample in images]), ['HW', 'C'])]") in out
    out = pipeline(READ + "a, b = fn.python_function(images, function=split, num_outputs=2, batch_processing=True)\n"
                   "return a, b\n")
    assert "for output in split([np.asarray(sample) for sample in images])]" in out


def test_lambda_is_called_in_parentheses():
    out = pipeline(READ + "return fn.python_function(images, function=lambda x: x[::-1])\n")
    assert "(lambda x: x[::-1])(np.asarray(sample))" in out


def test_what_stays_marked():
    for call, why in [
        ("fn.python_function(images, function=f, device='gpu')", "GPU python_function gets CuPy arrays"),
        ("fn.python_function(images, function=f, num_outputs=0)", "num_outputs=0"),
        ("fn.python_function(function=f)", "without inputs"),
        ("fn.python_function(images, function=make(3))", "function= is an expression"),
        ("fn.python_function(images, function=f, num_outputs=2, output_layouts=['A'])", "1 output_layouts for 2 outputs"),
        ("fn.dl_tensor_python_function(images, function=f)", "fn.dl_tensor_python_function has no dynamic-mode counterpart"),
    ]:
        out = pipeline(READ + f"x = {call}\nreturn x\n")
        assert "@pipeline_def" in out and why in _marker(out), call


def test_several_outputs_returned_directly_are_marked():
    out = pipeline(READ + "return fn.python_function(images, function=split, num_outputs=2)\n")
    assert "unpack them" in _marker(out)
