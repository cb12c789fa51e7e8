"""Names bound between ``pipe = Pipeline(...)`` and ``with pipe:`` (legacy.rewrite_with_blocks),
pipelines made inline in an iterator's arguments, and the reasons of two call-site markers."""
import textwrap

from dali_migrate.engine import convert_source


def _convert(body: str):
    src = textwrap.dedent('''\
        import nvidia.dali.fn as fn
        from nvidia.dali.pipeline import Pipeline


        def make(root, batch_size):
        ''') + textwrap.indent(textwrap.dedent(body), "    ")
    return convert_source(src).output


BLOCK = """\
with pipe:
    jpegs, labels = fn.readers.file(file_root=root, name="r")
    images = fn.decoders.image(jpegs, device="mixed")
    images = fn.resize(images, size=size)
    pipe.set_outputs(images, labels)
return pipe
"""


def test_settings_between_pipeline_and_with_are_read_before_the_graph():
    out = _convert("pipe = Pipeline(batch_size=batch_size, num_threads=2, device_id=0)\nsize = 64\n" + BLOCK)
    assert "dali-migrate:" not in out
    # defined after the setting, as the graph was
    assert out.index("size = 64") < out.index("def pipe_batches")


def test_a_setting_changed_after_the_with_block_still_stops_it():
    out = _convert("pipe = Pipeline(batch_size=batch_size, num_threads=2, device_id=0)\nsize = 64\n"
                   + BLOCK.replace("return pipe\n", "size = 32\nreturn pipe\n"))
    assert "the graph reads `size`, which make() assigns or changes after the graph is defined" in out


def test_pipeline_arguments_reading_what_follows_keep_the_old_place():
    # batch_size is rebound between: the pipeline took the value it had before
    out = _convert("pipe = Pipeline(batch_size=batch_size, num_threads=2, device_id=0)\nbatch_size = 2\nsize = 64\n" + BLOCK)
    assert "the graph reads `size`, which make() assigns or changes after the graph is defined" in out


def test_statements_using_the_pipeline_keep_the_old_place():
    out = _convert("pipe = Pipeline(batch_size=batch_size, num_threads=2, device_id=0)\nsize = 64\nprint(pipe)\n" + BLOCK)
    assert "the graph reads `size`, which make() assigns or changes after the graph is defined" in out


def test_calls_on_both_sides_keep_the_old_place():
    # a seed drawn before the statements between draw from the same generator
    out = _convert("pipe = Pipeline(batch_size=batch_size, num_threads=2, device_id=0, seed=draw())\nsize = pick()\n" + BLOCK)
    assert "the graph reads `size`, which make() assigns or changes after the graph is defined" in out


def test_a_helper_defined_before_the_pipeline_is_not_a_dataNode():
    out = _convert(
        "def shrink(img):\n    return fn.resize(img, size=8)\n\n"
        "pipe = Pipeline(batch_size=batch_size, num_threads=2, device_id=0)\nsize = 64\n"
        + BLOCK.replace("images = fn.resize(images, size=size)", "images = shrink(images)")
    )
    assert "made before the `with` block by a statement that cannot be moved" not in out


PIPE_DEF = '''\
from nvidia.dali import pipeline_def, fn
from nvidia.dali.plugin.pytorch import DALIGenericIterator


@pipeline_def(num_threads=2, device_id=0)
def files(root):
    jpegs, labels = fn.readers.file(file_root=root, name="Reader")
    return jpegs, labels

'''


def test_pipeline_made_in_the_iterator_arguments():
    out = convert_source(PIPE_DEF + 'loader = DALIGenericIterator([files(root="/d", batch_size=4)], ["x", "y"], reader_name="Reader")\n').output
    assert "dali-migrate:" not in out
    assert 'loader = DaliTorchIterator(files(root="/d", batch_size=4), ["x", "y"], batch_size=4,' in out


def test_pipeline_made_by_a_factory_in_the_iterator_arguments():
    out = convert_source(PIPE_DEF + (
        "def make(root):\n    pipe = files(root=root, batch_size=4)\n    pipe.build()\n    return pipe\n\n"
        'loader = DALIGenericIterator(make("/d"), ["x", "y"], reader_name="Reader")\n'
    )).output
    assert "dali-migrate:" not in out
    assert 'loader = DaliTorchIterator(make("/d"), ["x", "y"], batch_size=4,' in out


def test_inline_pipeline_serialized():
    out = convert_source(PIPE_DEF + 'files(root="/d", batch_size=4).serialize(filename="m.dali")\n').output
    assert "files(...).serialize(): serialized pipelines (e.g. for Triton) need pipeline mode" in out


def test_use_not_followed_quotes_the_statement():
    out = convert_source(PIPE_DEF + "kind = files\n").output
    assert "files is used here in a way dali-migrate cannot follow (`kind = files`)" in out
