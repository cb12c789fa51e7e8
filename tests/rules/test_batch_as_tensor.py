from _helpers import convert

PIPE = '@pipeline_def(batch_size=4)\ndef p(root):\n    j, l = fn.readers.file(file_root=root, name="R")\n    return j, l\n\n'


def test_dense_tensor_passed_on_converts():
    out = convert(PIPE + "import numpy as np\npipe = p('d')\nj, l = pipe.run()\nt = np.asarray(l.as_tensor())\n")
    assert "t = np.asarray(ndd.as_tensor(l))" in out
    assert "dali-migrate:" not in out


def test_method_of_the_dense_tensor_is_left_to_a_person():
    # TensorCPU.shape() is a method; the ndd.Tensor's shape a property (a tuple, not a list)
    out = convert(PIPE + "pipe = p('d')\nj, l = pipe.run()\ns = l.as_tensor().shape()\n")
    assert "s = l.as_tensor().shape()" in out
    assert "as_tensor.shape" not in out and "`shape`" in out


def test_method_through_the_name_it_is_bound_to_is_left_to_a_person():
    out = convert(PIPE + "pipe = p('d')\nj, l = pipe.run()\nt = l.as_tensor()\nprint(t.layout())\n")
    assert "t = l.as_tensor()" in out and "`t.layout`" in out
