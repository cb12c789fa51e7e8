from _helpers import pipeline


def test_fn_call_becomes_ndd_call():
    out = pipeline("x = fn.random.uniform(range=[0, 1])\nreturn fn.flip(x)\n")
    assert "ndd.flip(x)" in out and "fn." not in out


def test_deprecated_alias_uses_replacement():
    out = pipeline("j, l = fn.file_reader(file_root='d')\nreturn fn.image_decoder(j), l\n")
    assert "ndd.readers.File(file_root='d')" in out
    assert "ndd.decoders.image(j)" in out


def test_moved_experimental_operator():
    out = pipeline("j, l = fn.readers.file(file_root='d')\nreturn fn.experimental.equalize(fn.decoders.image(j))\n")
    assert "ndd.equalize(ndd.decoders.image(j))" in out


def test_operator_without_counterpart_blocks_the_pipeline():
    out = pipeline("x = fn.dl_tensor_python_function(fn.random.uniform(), function=abs)\nreturn x\n")
    assert "@pipeline_def" in out
    assert "# dali-migrate: [pipeline-def] pipeline not converted: fn.dl_tensor_python_function has no dynamic-mode counterpart" in out


def test_unknown_operator_blocks():
    out = pipeline("return fn.no_such_op()\n")
    assert "fn.no_such_op is not a DALI" in out and "@pipeline_def" in out


GRAPH_ARGS = """\
import numpy as np
from nvidia.dali import fn, pipeline_def


@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def p(root):
    j, l = fn.readers.file(file_root=root, bytes_per_sample_hint=4096, name="Reader")
    i = fn.decoders.image(j, device="cpu", preserve=True)
    return fn.resize(i, resize_x=8, resize_y=8, name="resize", bytes_per_sample_hint=[192]), l


def first(root):
    pipe = p(root)
    pipe.build()
    images, labels = pipe.run()
    return [np.asarray(t).tolist() for t in images], [np.asarray(t).tolist() for t in labels]
"""


def test_arguments_only_a_graph_takes_are_dropped(tmp_path, fixture_data):
    # ndd's operators take none of them (TypeError: unexpected keyword argument)
    from _helpers import run_both

    out = pipeline("return fn.resize(x, size=4, name='r', preserve=True, bytes_per_sample_hint=64)\n")
    assert "ndd.resize(x, size=4)" in out
    from dali_migrate.engine import convert_source

    converted = convert_source(GRAPH_ARGS).output
    assert "name=" not in converted and "preserve" not in converted and "bytes_per_sample_hint" not in converted
    want, got = run_both(tmp_path, GRAPH_ARGS, converted, "first", str(fixture_data / "images"))
    assert want == got


def test_deprecated_name_whose_replacement_defaults_otherwise_is_not_renamed():
    # fast_resize_crop_mirror defaults antialias to False, resize_crop_mirror to True: renamed, the
    # call would resize with antialiasing (other pixels); the catalog compares defaults too
    out = pipeline("return fn.fast_resize_crop_mirror(x, crop=(20, 20), resize_x=40, resize_y=40)\n")
    assert "@pipeline_def" in out and "resize_crop_mirror(" not in out.replace("fast_resize_crop_mirror(", "")
    assert "fn.fast_resize_crop_mirror has no counterpart in dynamic mode" in out
