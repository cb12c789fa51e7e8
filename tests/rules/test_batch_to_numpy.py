import pytest
from _helpers import convert, run_both

PIPE = ("import numpy as np\n@pipeline_def(batch_size=3, num_threads=1, device_id=None, seed=5)\ndef p():\n"
        "    return fn.random.uniform(shape=[2], seed=1), fn.cast(fn.random.uniform(range=[0, 9], shape=[1]), dtype=types.INT32)\n\n")


def test_numpy_array_of_a_whole_tensorlist_reads_the_dense_tensor():
    out = convert(PIPE + "pipe = p()\npipe.build()\na, b = pipe.run()\nx = np.array(a)\ny = np.asarray(b, dtype=np.float64)\n")
    assert "x = np.array(ndd.as_tensor(a))" in out
    assert "y = np.asarray(ndd.as_tensor(b), dtype=np.float64)" in out
    assert "dali-migrate:" not in out


def test_numpy_array_of_the_outputs_tuple_is_marked():
    out = convert(PIPE + "pipe = p()\npipe.build()\nout = pipe.run()\nx = np.array(out)\n")
    assert "numpy's array of the tuple of pipeline outputs" in out


def test_the_converted_array_is_the_tensorlists_array(tmp_path):
    # an ndd.Batch given to np.array as it is makes a 0-d object array, with no error
    pytest.importorskip("nvidia.dali")
    src = ("import nvidia.dali.fn as fn\nimport nvidia.dali.types as types\nfrom nvidia.dali import pipeline_def\n" + PIPE +
           "def run():\n    pipe = p()\n    pipe.build()\n    a, b = pipe.run()\n    return np.array(a), np.asarray(b)\n")
    out = convert(src, header="")
    want, got = run_both(tmp_path, src, out, "run")
    for w, g in zip(want, got):
        assert w.dtype == g.dtype and w.shape == g.shape and w.shape[0] == 3
