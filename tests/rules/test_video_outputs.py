"""The number of outputs of DALI's video readers (dali_migrate/video_outputs.py), and what the
conversion does with it.

The count is checked against DALI itself: every combination of argument states is given to the
reader in a pipeline graph, whose length is what DALI's own output function says. An argument
written as a variable is checked for every value it could hold; a combination DALI refuses to
build (not exactly one source) is left out, since there the converted reader fails as well."""

import itertools
import textwrap

import libcst as cst
import pytest

from dali_migrate import video_outputs
from tests.rules._helpers import convert, pipeline

ABSENT, VAR = object(), object()

VALUES = {
    "filenames": [ABSENT, None, [], ["a.mp4"], VAR],
    "file_root": [ABSENT, None, "", "videos", VAR],
    "file_list": [ABSENT, None, "", "list.txt", VAR],
    "labels": [ABSENT, None, [], [3], VAR],
    "enable_frame_num": [ABSENT, False, True, "none", "scalar", "sequence", VAR],
    "enable_timestamps": [ABSENT, False, True, VAR],
}
SOURCES = ("filenames", "file_root", "file_list")
# a variable may hold any value its argument takes (None: DALI's Python side drops the argument)
CONCRETE = {k: [v for v in vs if v is not VAR] for k, vs in VALUES.items()}
SCHEMAS = {
    "readers.video": "readers__Video",
    "video_reader": "VideoReader",
    "readers.video_resize": "readers__VideoResize",
    "video_reader_resize": "VideoReaderResize",
    "experimental.readers.video": "experimental__readers__Video",
}


def _call(op: str, args: dict) -> cst.Call:
    text = ", ".join(["sequence_length=2"] + [f"{k}={'v_' + k if v is VAR else repr(v)}" for k, v in args.items() if v is not ABSENT])
    return cst.parse_expression(f"fn.{op}({text})")


def _builds(schema: str, args: dict) -> bool:
    """Does the reader accept its sources (DALI_ENFORCE in its constructor): the legacy ones exactly
    one not empty (video_reader_op.h), the experimental one exactly one given (video_reader_decoder_op.cc)."""
    if schema in video_outputs.LEGACY:
        return sum(args.get(s, ABSENT) not in (ABSENT, None, "", []) for s in SOURCES) == 1
    return sum(args.get(s, ABSENT) not in (ABSENT, None) for s in SOURCES) == 1


@pytest.fixture(scope="module")
def dali_count():
    fn = pytest.importorskip("nvidia.dali.fn")
    from nvidia.dali import Pipeline

    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    cache = {}

    def count(op: str, args: dict) -> int:
        key = (op, repr(sorted(args.items())))
        if key not in cache:
            func = fn
            for part in op.split("."):
                func = getattr(func, part)
            kwargs = {k: v for k, v in args.items() if v is not ABSENT}
            with pipe:
                out = func(sequence_length=2, **kwargs)
            cache[key] = len(out) if isinstance(out, list) else 1
        return cache[key]

    return count


def _combinations(max_vars: int):
    keys = list(VALUES)
    for values in itertools.product(*(VALUES[k] for k in keys)):
        if sum(v is VAR for v in values) <= max_vars:
            yield dict(zip(keys, values))


@pytest.mark.parametrize("op", ["readers.video", "experimental.readers.video", "readers.video_resize"])
def test_count_is_dalis_for_every_value_the_arguments_can_hold(op, dali_count):
    schema = SCHEMAS[op]
    for args in _combinations(max_vars=1):
        n = video_outputs.count(_call(op, args), schema)
        variables = [k for k, v in args.items() if v is VAR]
        if n is None:
            # told wherever everything is written out and the reader builds, or the one
            # variable is the only source
            alone = variables and variables[0] in SOURCES and not any(args[s] not in (ABSENT, None) for s in SOURCES if s != variables[0])
            assert variables and not alone or not _builds(schema, args), args
            continue
        for values in itertools.product(*(CONCRETE[k] for k in variables)):
            concrete = {**args, **dict(zip(variables, values))}
            if _builds(schema, concrete):
                assert dali_count(op, concrete) == n, (op, concrete)


@pytest.mark.parametrize("op", ["video_reader", "video_reader_resize"])
def test_deprecated_names_count_as_their_readers(op, dali_count):
    schema = SCHEMAS[op]
    for args in [{"filenames": ["a.mp4"]}, {"filenames": VAR, "labels": []}, {"file_root": VAR},
                 {"file_list": "list.txt", "enable_frame_num": True, "enable_timestamps": True}]:
        n = video_outputs.count(_call(op, args), schema)
        concrete = {k: (["a.mp4"] if k == "filenames" else "x") if v is VAR else v for k, v in args.items()}
        assert n == dali_count(op, concrete)


def test_what_cannot_be_told():
    legacy, new = SCHEMAS["readers.video"], SCHEMAS["experimental.readers.video"]
    # two sources written as variables: which one is not empty cannot be seen
    assert video_outputs.count(_call("readers.video", {"filenames": VAR, "file_root": VAR}), legacy) is None
    # labels=<variable> may be None (no label output) or a list
    assert video_outputs.count(_call("readers.video", {"filenames": VAR, "labels": VAR}), legacy) is None
    assert video_outputs.count(_call("experimental.readers.video", {"filenames": VAR, "labels": VAR}), new) is None
    assert video_outputs.count(_call("readers.video", {"file_list": VAR, "enable_timestamps": VAR}), legacy) is None
    # 1 is not True to DALI's string policy; **kwargs may hold anything
    assert video_outputs.count(_call("readers.video", {"filenames": VAR, "enable_frame_num": 1}), legacy) is None
    starred = cst.parse_expression("fn.readers.video(file_root=r, sequence_length=2, **more)")
    assert video_outputs.count(starred, legacy) is None
    # the legacy reader gives file_root a label and ignores the other outputs' flags
    assert video_outputs.count(_call("readers.video", {"file_root": VAR, "labels": VAR, "enable_frame_num": VAR}), legacy) == 2


def test_the_constructors_refuse_other_than_one_source():
    """_builds() above, read from DALI: the legacy check in the installed header, the experimental
    one by building a CPU pipeline with two sources."""
    dali = pytest.importorskip("nvidia.dali")
    from pathlib import Path

    header = Path(dali.__file__).parent / "include/dali/operators/video/legacy/reader/video_reader_op.h"
    if header.exists():
        text = header.read_text()
        assert "int arg_count = !filenames_.empty() + !file_root_.empty() + !file_list_.empty();" in text
        assert "DALI_ENFORCE(arg_count == 1," in text
    from nvidia.dali import fn, pipeline_def

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def two_sources():
        video, label = fn.experimental.readers.video(device="cpu", filenames=["a.avi"], file_root="b", sequence_length=2)
        return video

    with pytest.raises(RuntimeError, match="Only one of the following arguments"):
        two_sources().build()


# -- the conversion ---------------------------------------------------------------------------------


def test_single_output_video_reader_is_unpacked_in_the_loop():
    out = pipeline(
        """\
        video = fn.experimental.readers.video(device="cpu", filenames=files, sequence_length=3)
        return fn.flip(video, horizontal=1)
        """,
        decorator="@pipeline_def(batch_size=2)",
    )
    assert "for (video,) in reader.next_epoch(batch_size=batch_size):" in out
    assert "# dali-migrate:" not in out


def test_labelled_video_reader_bound_to_one_name():
    out = pipeline(
        """\
        output = fn.readers.video(device="gpu", file_root=root, sequence_length=3, name="Reader")
        frames = fn.crop(output[0], crop=(8, 8))
        return frames, output[1]
        """
    )
    assert "reader = ndd.readers.Video(device=\"gpu\", file_root=root, sequence_length=3)" in out
    # two outputs: the name holds next_epoch's tuple as it held the reader's list
    assert "for output in reader.next_epoch(batch_size=batch_size, ctx=ctx):" in out
    assert "# dali-migrate:" not in out


def test_pipeline_def_returning_a_readers_list_is_marked():
    # @pipeline_def refuses a returned list at build (a Pipeline's define_graph took it: see below)
    out = pipeline(
        """\
        output = fn.readers.video(device="gpu", file_root=root, sequence_length=3)
        return output
        """
    )
    assert "the pipeline returns `output`, the list of a reader's outputs, which @pipeline_def refuses" in out


def test_one_output_reader_returned_by_name_is_a_one_tuple():
    out = pipeline(
        """\
        frames = fn.readers.video(device="gpu", filenames=files, sequence_length=3)
        return frames
        """
    )
    assert "for (frames,) in reader.next_epoch(batch_size=batch_size, ctx=ctx):" in out
    assert "outputs = (frames,)\n" in out


def test_unknown_count_stays_marked():
    out = pipeline(
        """\
        frames = fn.readers.video(device="gpu", filenames=files, labels=labels, sequence_length=3)
        return frames
        """
    )
    assert "cannot tell whether fn.readers.video gives one output or several here" in out
    assert "@pipeline_def" in out


def test_other_gpu_readers_stay_marked():
    out = pipeline(
        """\
        data = fn.readers.numpy(device="gpu", file_root=root)
        return data
        """
    )
    assert 'fn.readers.numpy with device= other than "cpu": convert by hand' in out


def test_video_reader_device_must_be_written_out():
    out = pipeline(
        """\
        frames = fn.readers.video(device=dev, filenames=files, sequence_length=3)
        return frames
        """
    )
    assert 'fn.readers.video with device= other than "cpu": convert by hand' in out


def test_legacy_video_reader_class():
    src = textwrap.dedent(
        """\
        from nvidia.dali.pipeline import Pipeline
        import nvidia.dali.ops as ops


        class VideoPipe(Pipeline):
            def __init__(self, batch_size, num_threads, device_id, data):
                super().__init__(batch_size, num_threads, device_id, seed=12)
                self.input = ops.readers.Video(device="gpu", file_root=data, sequence_length=5)

            def define_graph(self):
                output = self.input(name="Reader")
                return output


        pipe = VideoPipe(batch_size=4, num_threads=2, device_id=0, data="videos")
        pipe.build()
        sequences, labels = pipe.run()
        """
    )
    out = convert(src, header="")
    assert "for output in reader.next_epoch(batch_size=batch_size, ctx=ctx):" in out
    assert "sequences, labels = next(pipe)" in out
    assert "# dali-migrate:" not in out


def test_pipeline_def_returning_a_list_is_marked_as_dali_refuses_it():
    # DALI 2.4: TypeError "Illegal pipeline output type. The output 0 contains a nested `DataNode`"
    out = pipeline(
        """\
        jpegs, labels = fn.readers.file(file_root=root)
        return [fn.decoders.image(jpegs), labels]
        """
    )
    assert "the pipeline returns a list, which @pipeline_def refuses at build" in out
    assert "ndd." not in out


def test_pipeline_def_returning_a_list_is_refused_by_dali_too():
    dali = pytest.importorskip("nvidia.dali")

    @dali.pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return [dali.fn.random.uniform(range=(0, 1)), dali.fn.random.uniform(range=(0, 1))]

    with pytest.raises(TypeError, match="nested `DataNode`"):
        p = pipe()
        p.build()
