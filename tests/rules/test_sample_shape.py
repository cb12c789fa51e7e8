"""tl[i].shape() -> list(batch.select(i).shape) (rules/sample_shape.py)."""

import pytest

from tests.rules._helpers import HEADER, convert, run_both, without_rule

SRC = HEADER + '''
@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def pipe(data_dir):
    jpegs, labels = fn.readers.file(file_root=data_dir)
    return fn.decoders.image(jpegs), labels


def sizes(data_dir):
    p = pipe(data_dir)
    p.build()
    images, labels = p.run()
    return [images[i].shape() for i in range(len(images))]
'''


def test_sample_shape_method_becomes_a_list_of_the_property():
    out = convert(SRC, header="")
    assert "return [list(images.select(i).shape) for i in range(images.batch_size)]\n" in out
    assert "dali-migrate:" not in out


def test_a_file_that_binds_list_is_left_to_a_person():
    out = convert(SRC + "\nlist = tuple\n", header="")
    assert "@pipeline_def" in out and "binds the name `list` itself" in out


def test_disabled_rule_leaves_the_pipeline_marked():
    out = without_rule(SRC, "sample-shape")
    assert "@pipeline_def" in out and "needs rule sample-shape" in out


def test_converted_code_gives_the_same_shapes_as_the_pipeline(tmp_path, fixture_data):
    pytest.importorskip("nvidia.dali")
    out = convert(SRC, header="")
    want, got = run_both(tmp_path, SRC, out, "sizes", str(fixture_data / "images"))
    assert got == want
    assert all(type(s) is list and len(s) == 3 for s in got)
