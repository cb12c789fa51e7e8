"""batch-layout: TensorList.layout() -> (batch.layout or "")."""

import pytest
from _helpers import convert

PIPE = '@pipeline_def(batch_size=2)\ndef p(root):\n    j, l = fn.readers.file(file_root=root)\n    return j, l\n\n'


def test_layout_method_becomes_the_property_or_empty():
    out = convert(PIPE + "pipe = p('d')\nj, l = pipe.run()\nif j.layout():\n    print(j.layout() + ' ')\n")
    assert 'if (j.layout or ""):\n    print((j.layout or "") + \' \')' in out
    assert "# dali-migrate" not in out


def test_layout_with_arguments_is_left():
    out = convert(PIPE + "pipe = p('d')\nj, l = pipe.run()\nprint(j.layout(0))\n")
    assert "@pipeline_def" in out and "TensorList.layout() with arguments" in out


def test_rule_disabled_leaves_the_pipeline():
    from dali_migrate.rules import all_rules

    rules = [r.id for r in all_rules() if r.id != "batch-layout"]
    out = convert(PIPE + "pipe = p('d')\nj, l = pipe.run()\nprint(j.layout())\n", rules=rules)
    assert "@pipeline_def" in out and "TensorList.layout() has no automatic counterpart" in out


def test_same_text_as_the_tensor_list_gives():
    np = pytest.importorskip("numpy")
    pytest.importorskip("nvidia.dali")
    import nvidia.dali.experimental.dynamic as ndd
    from nvidia.dali import fn, pipeline_def

    samples = [np.zeros((2, 3), np.uint8)] * 2

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def two():
        return fn.external_source(source=lambda: samples), fn.external_source(source=lambda: samples, layout="HW")

    pipe = two()
    pipe.build()
    plain, laid = pipe.run()
    for tl, batch in ((plain, ndd.as_batch(samples)), (laid, ndd.as_batch(samples, layout="HW"))):
        assert tl.layout() == (batch.layout or "")
    assert plain.layout() == "" and laid.layout() == "HW"
