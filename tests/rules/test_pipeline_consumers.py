"""Code that takes pipeline objects from other files, left in pipeline mode beside converted pipelines."""

from _helpers import convert

from dali_migrate.engine import convert_source

_PIPE = (
    "@pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=1)\n"
    "def train_pipe(data_dir):\n"
    "    jpegs, labels = fn.readers.file(file_root=data_dir, name='Reader')\n"
    "    return fn.decoders.image(jpegs), labels\n"
)
_TORCH = "from nvidia.dali.plugin.pytorch import DALIGenericIterator\n"
_MARK = "[pipeline-consumer]"


def test_an_iterator_subclass_nothing_here_makes_is_marked_where_the_pipelines_convert():
    # w_SNN's loader module: the training script (another file) makes Loader(train_pipe(...));
    # converted, train_pipe gives a generator the unconverted Loader cannot take
    out = convert(
        _TORCH + "class Loader(DALIGenericIterator):\n"
        "    def __init__(self, pipeline, output_map):\n"
        "        self.size_1 = pipeline.epoch_size('Reader')\n"
        "        super().__init__(pipeline, output_map, reader_name='Reader')\n\n" + _PIPE
    )
    assert "ndd.readers.File" in out  # the pipeline still converts
    assert (f"{_MARK} class Loader (derived from DALI's DALIGenericIterator) takes DALI pipeline objects and nothing "
            "in this file makes or calls it; this file's pipelines (train_pipe) are converted") in out
    assert "class Loader(DALIGenericIterator):" in out


def test_a_hand_written_iterator_over_given_pipelines_is_marked():
    # DeepLearningExamples' SSD DALICOCOIterator
    out = convert(
        "class CocoIterator(object):\n"
        "    def __init__(self, pipelines, size):\n"
        "        self.batch_size = pipelines[0].max_batch_size\n"
        "        self._pipes = pipelines\n"
        "    def __next__(self):\n"
        "        outs = [p.share_outputs() for p in self._pipes]\n"
        "        for p in self._pipes:\n"
        "            p.release_outputs()\n"
        "            p.schedule_run()\n"
        "        return outs\n\n" + _PIPE
    )
    assert f"{_MARK} class CocoIterator (it reaches pipeline members: .max_batch_size, .share_outputs, .release_outputs, .schedule_run)" in out


def test_a_function_given_a_pipeline_is_marked():
    out = convert("def length(pipe):\n    return pipe.epoch_size('Reader') // pipe.max_batch_size\n\n" + _PIPE)
    assert f"{_MARK} function length (it reaches pipeline members: .epoch_size, .max_batch_size)" in out


def test_used_here_or_making_its_own_pipeline_or_nothing_converted_is_not_marked():
    used = convert(
        _TORCH + "class Loader(DALIGenericIterator):\n"
        "    def __init__(self, *args, **kwargs):\n        super().__init__(*args, **kwargs)\n\n" + _PIPE
        + "def loader(d):\n    return Loader(train_pipe(d), ['x', 'y'], reader_name='Reader')\n"
    )
    assert _MARK not in used and "class Loader(DaliTorchIterator):" in used
    own = convert(
        "from nvidia.dali import Pipeline\n" + _TORCH + "class Own(DALIGenericIterator):\n"
        "    def __init__(self, d):\n"
        "        pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)\n"
        "        with pipe:\n"
        "            j, l = fn.readers.file(file_root=d, name='Reader')\n"
        "            pipe.set_outputs(j, l)\n"
        "        super().__init__(pipe, ['j', 'l'], reader_name='Reader')\n\n" + _PIPE
    )
    assert _MARK not in own
    left = convert(  # the pipeline stays a pipeline (a serialized one): what takes it still can
        _TORCH + "class Loader(DALIGenericIterator):\n    pass\n\n" + _PIPE + "train_pipe('d').serialize()\n"
    )
    assert _MARK not in left and "@pipeline_def" in left


def test_own_locals_and_own_members_are_not_pipelines_given_from_elsewhere():
    out = convert(
        _PIPE
        + "def main(d):\n    pipe = train_pipe(d)\n    pipe.build()\n    print(pipe.epoch_size('Reader'))\n\n"
        "class Counter:\n    def epoch_size(self):\n        return 3\n    def half(self):\n        return self.epoch_size() // 2\n"
    )
    assert _MARK not in out and "get_metadata()" in out


def test_the_marker_is_written_once_and_a_second_run_keeps_it():
    src = ("import nvidia.dali.fn as fn\nfrom nvidia.dali import pipeline_def\n" + _TORCH
           + "class Loader(DALIGenericIterator):\n    pass\n\n" + _PIPE)
    once = convert_source(src).output
    assert once.count(_MARK) == 1
    assert convert_source(once).output == once
