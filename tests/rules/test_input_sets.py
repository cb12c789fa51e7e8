import pytest
from _helpers import pipeline, run_both


@pytest.mark.parametrize("body, shown", [
    ("out = [images, fn.flip(images)]\nout = fn.pad(out, fill_value=255)\nreturn tuple(out)\n", "`out`"),
    ("a, b = fn.pad([images, fn.flip(images)], fill_value=255)\nreturn a, b\n", "`[images, fn.flip(images)]`"),
    ("flipped = fn.flip([images, l])\nreturn tuple(flipped)\n", "`[images, l]`"),
])
def test_a_list_of_dali_data_as_one_input_stops_the_pipeline(body, shown):
    out = pipeline("j, l = fn.readers.file(file_root='d')\nimages = fn.decoders.image(j)\n" + body)
    assert f"is given a list of DALI data as one input ({shown})" in out and "@pipeline_def" in out


def test_a_list_of_python_values_as_an_input_is_a_constant_and_converts(tmp_path, fixture_data):
    pytest.importorskip("nvidia.dali")
    src = (
        "import numpy as np\nimport nvidia.dali.fn as fn\nfrom nvidia.dali import pipeline_def\n\n"
        "@pipeline_def(batch_size=4, num_threads=1, device_id=None)\ndef p(root):\n"
        "    j, l = fn.readers.file(file_root=root)\n"
        "    return fn.slice(fn.decoders.image(j), [0.25, 0.25], [0.5, 0.5], normalized_anchor=True, normalized_shape=True), l\n\n"
        "def shapes(root):\n    pipe = p(root)\n    pipe.build()\n"
        "    return [[np.asarray(pipe.run()[0][i]).shape for i in range(4)] for _ in range(2)]\n"
    )
    from dali_migrate.engine import convert_source

    out = convert_source(src).output
    assert "dali-migrate:" not in out and "ndd.slice(" in out
    want, got = run_both(tmp_path, src, out, "shapes", str(fixture_data / "images"))
    assert want == got
