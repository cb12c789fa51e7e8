"""rules/batch_select.py: tl.at(i) / tl[i] -> batch.select(i), and where a kept sample stops it."""

from _helpers import convert

PIPE = '@pipeline_def(batch_size=4)\ndef p(root):\n    j, l = fn.readers.file(file_root=root, name="R")\n    return j, l\n\n'
RUN = "pipe = p('d')\npipe.build()\nj, l = pipe.run()\n"


def test_a_sample_kept_in_a_name_and_passed_on_converts():
    out = convert(PIPE + "import numpy as np\n" + RUN + "s = l[0]\nv = np.asarray(s)\n")
    assert "dali-migrate:" not in out and "s = l.select(0)" in out and "v = np.asarray(s)" in out


def test_a_kept_sample_s_methods_are_left_to_a_person():
    # retinanet-examples: `dali_tensor = dali_data[batch]`, then `dali_tensor.shape()` and
    # `dali_tensor.copy_to_external(ptr)`: TensorGPU methods the ndd.Tensor has not (shape is a tuple there)
    out = convert(PIPE + RUN + "s = l[0]\nprint(s.shape())\ns.copy_to_external(0)\n")
    assert "s = l[0]" in out and "l.select(" not in out
    assert "its attributes are read (`s.shape`)" in out


def test_a_kept_sample_given_to_a_function_of_the_file_is_left_to_a_person():
    out = convert(PIPE + "def feed(t, out):\n    t.copy_to_external(out)\n\n\n" + RUN + "s = l[0]\nfeed(s, 0)\n")
    assert "s = l[0]" in out and "goes to feed(), which dali-migrate does not follow" in out


def test_the_name_in_another_scope_is_another_variable():
    # `s.shape()` in a function of its own reads that function's `s`, not the kept sample
    out = convert(PIPE + "import numpy as np\ndef f(s):\n    return s.shape()\n\n\n" + RUN + "s = l[0]\nv = np.asarray(s)\n")
    assert "dali-migrate:" not in out and "s = l.select(0)" in out
