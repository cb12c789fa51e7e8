import pytest
from _helpers import convert, pipeline, without_rule

from dali_migrate.rules.argument_names import EVERY_OPERATOR


def test_an_argument_no_schema_has_stops_the_pipeline_named():
    out = pipeline("j, l = fn.readers.file(file_root='d')\nreturn fn.normalize(fn.decoders.image(j), std=64.0), l\n")
    assert "fn.normalize has no argument `std` in DALI" in out
    assert "ndd." not in out and "@pipeline_def" in out


def test_every_unknown_argument_of_a_call_is_named_once_in_the_call_s_order():
    out = pipeline("j, l = fn.readers.file(file_root='d', zeta=1, alpha=2)\nreturn j, l\n")
    assert "fn.readers.file has no arguments `zeta`, `alpha` in DALI" in out


def test_a_legacy_operator_is_named_as_its_member_is_made():
    out = convert(
        "from nvidia.dali.pipeline import Pipeline\nimport nvidia.dali.ops as ops\n\n"
        "class P(Pipeline):\n"
        "    def __init__(self, batch_size, num_threads, device_id):\n"
        "        super().__init__(batch_size, num_threads, device_id)\n"
        "        self.input = ops.FileReader(file_root='d', num_seg=3)\n"
        "    def define_graph(self):\n"
        "        j, l = self.input(name='Reader')\n"
        "        return j, l\n", header="")
    assert "ops.FileReader has no argument `num_seg` in DALI" in out and "class P(Pipeline)" in out


def test_arguments_every_operator_takes_and_schema_arguments_convert():
    out = pipeline("j, l = fn.readers.file(file_root='d', name='Reader', seed=3, preserve=True)\n"
                   "return fn.resize(fn.decoders.image(j, device='mixed'), resize_x=8.0, device='gpu', seed=2), l\n")
    assert "has no argument" not in out and "ndd.resize(" in out


def test_deprecated_arguments_dali_still_takes_convert():
    # (CropMirrorNormalize still takes output_dtype and image_type, with a warning)
    out = pipeline("j, l = fn.readers.file(file_root='d')\n"
                   "return fn.crop_mirror_normalize(fn.decoders.image(j), output_dtype=types.FLOAT, image_type=types.RGB), l\n")
    assert "has no argument" not in out and "ndd.crop_mirror_normalize(" in out


def test_external_source_s_python_arguments_are_not_schema_arguments():
    out = pipeline("x = fn.external_source(source=[[1]], cycle=True, batch=False)\nreturn x\n")
    assert "has no argument" not in out


def test_with_the_rule_disabled_the_pipeline_still_stays_as_written():
    # (as every operator rule's blocker: disabling a rule never lets code through that would not run)
    out = without_rule("import nvidia.dali.fn as fn\nfrom nvidia.dali import pipeline_def\n\n"
                       "@pipeline_def(batch_size=2)\ndef p():\n    j, l = fn.readers.file(file_root='d', zeta=1)\n    return j\n",
                       "argument-names")
    assert "has no argument `zeta`" in out and "ndd." not in out


@pytest.mark.parametrize("keyword", ["std", "batch_size", "num_seg"])
def test_dali_refuses_what_the_rule_refuses(keyword, fixture_data):
    """The rule's premise, against the installed DALI: a pipeline giving such an argument fails
    where it is built, and each argument every operator takes builds."""
    pytest.importorskip("nvidia.dali")
    from nvidia.dali import fn, pipeline_def

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def p(extra):
        j, _ = fn.readers.file(file_root=str(fixture_data / "images"))
        return fn.normalize(fn.cast(fn.peek_image_shape(j), dtype=9), **extra)

    with pytest.raises(KeyError, match=keyword):
        pipe = p({keyword: 1.0})
        pipe.build()
    values = {"device": "cpu", "name": "n", "seed": 3, "preserve": True}
    assert set(values) == EVERY_OPERATOR
    pipe = p(values)
    pipe.build()
    pipe.run()


def test_types_constant_takes_its_value_by_keyword_and_hands_other_keywords_on():
    # DALI's spectrogram notebook: types.Constant(device=device, value=audio_data); `value` is the
    # Python function's parameter, not fn.constant's schema argument
    out = pipeline("return fn.cast(types.Constant(value=[1.0, 2.0], device='cpu'), dtype=types.FLOAT)\n")
    assert "has no argument" not in out
    out = pipeline("return fn.cast(types.Constant(value=[1.0, 2.0], zeta=1), dtype=types.FLOAT)\n")
    assert "fn.constant has no argument `zeta`" in out
