"""An iterator call's comments stay with the arguments that carry their values (rules/torch_iterator.py).

The emitted class takes the pipeline and output map by position and some settings under other
names (reader_name= -> reader_meta=): the call is written again, and every comment of the old
call must come through, next to what it described."""

from dali_migrate.engine import convert_source

HEADER = (
    "from nvidia.dali import fn, pipeline_def\n"
    "from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy\n\n\n"
    "@pipeline_def(batch_size=4)\n"
    "def pipe_fn(root):\n"
    '    jpegs, labels = fn.readers.file(file_root=root, name="Reader")\n'
    "    return jpegs, labels\n\n\n"
    "def run(root):\n"
    "    pipe = pipe_fn(root)\n"
)


def _convert(call: str) -> str:
    result = convert_source(HEADER + call + "    return loader\n")
    assert not result.markers, [m.reason for m in result.markers]
    return result.output


def test_comments_follow_their_arguments_when_the_order_changes():
    out = _convert(
        "    loader = DALIGenericIterator(\n"
        "        pipelines=[pipe],  # one GPU\n"
        '        output_map=["images", "labels"],\n'
        "        size=50,  # dataset size\n"
        "        last_batch_policy=LastBatchPolicy.PARTIAL,  # keep the incomplete last batch\n"
        "        auto_reset=True  # reset at the end of each epoch\n"
        "    )\n"
    )
    assert (
        "    loader = DaliTorchIterator(\n"
        "        pipe,  # one GPU\n"
        '        ["images", "labels"],\n'
        "        batch_size=4,\n"
        "        size=50,  # dataset size\n"
        "        auto_reset=True,  # reset at the end of each epoch\n"
        '        last_batch_policy="PARTIAL"  # keep the incomplete last batch\n'
        "    )\n"
    ) in out


def test_a_comment_on_an_argument_that_goes_away_is_kept_at_the_end():
    out = _convert(
        "    loader = DALIGenericIterator(\n"
        '        [pipe], ["images", "labels"],\n'
        "        dynamic_shape=True,  # images of any size\n"
        '        reader_name="Reader",  # the epoch from the reader\n'
        "    )\n"
    )
    assert "reader_meta=ndd.readers.File(file_root=root).get_metadata(),  # the epoch from the reader" in out
    assert "# images of any size" in out
    compile(out, "out.py", "exec")


def test_a_call_without_comments_keeps_its_layout():
    out = _convert('    loader = DALIGenericIterator([pipe], ["a", "b"], reader_name="Reader", auto_reset=True)\n')
    assert ('loader = DaliTorchIterator(pipe, ["a", "b"], batch_size=4, '
            'reader_meta=ndd.readers.File(file_root=root).get_metadata(), auto_reset=True)\n') in out
