"""tl.dtype -> batch.dtype.type_id (rules/batch_dtype.py)."""

import pytest

from tests.rules._helpers import HEADER, convert, run_both, without_rule

SRC = HEADER + '''
@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def pipe(data_dir):
    jpegs, labels = fn.readers.file(file_root=data_dir)
    return fn.decoders.image(jpegs), labels


def kinds(data_dir):
    p = pipe(data_dir)
    p.build()
    images, labels = p.run()
    return images.dtype, str(labels.dtype), labels.dtype == types.INT32, f"{images.dtype}"
'''


def test_dtype_property_becomes_the_type_id_of_the_batch_s_dtype():
    out = convert(SRC, header="")
    assert "return images.dtype.type_id, str(labels.dtype.type_id), labels.dtype.type_id == types.INT32" in out
    assert "dali-migrate:" not in out


def test_disabled_rule_leaves_the_pipeline_marked():
    out = without_rule(SRC, "batch-dtype")
    assert "@pipeline_def" in out and "TensorList.dtype differs on ndd.Batch" in out


def test_converted_code_gives_the_same_dtypes_as_the_pipeline(tmp_path, fixture_data):
    pytest.importorskip("nvidia.dali")
    out = convert(SRC, header="")
    want, got = run_both(tmp_path, SRC, out, "kinds", str(fixture_data / "images"))
    assert got == want
    assert want[1] == "DALIDataType.INT32" and want[2] is True
