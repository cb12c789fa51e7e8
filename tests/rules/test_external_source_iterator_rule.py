"""A framework iterator over a pipeline with external sources: the pipeline becomes the form an
iterator resets (it yields None where the source ended), the iterator the framework's
``*SourceIterator`` class over ``PrefetchedPipeline``; what cannot be driven so is marked.
(tests/test_external_source_iterator.py runs the conversions against DALI's iterators.)"""

import textwrap

from _helpers import convert, unindented

HEADER = (
    "import numpy as np\nimport nvidia.dali.fn as fn\nimport nvidia.dali.types as types\n"
    "from nvidia.dali import pipeline_def\nfrom nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy\n"
)
SOURCES = '''

class Counter:
    def __call__(self, info):
        if info.iteration >= 3:
            raise StopIteration
        return [np.full((2,), info.epoch_idx)] * 4


class Frames:
    def __iter__(self):
        return iter([[np.zeros(2)] * 4] * 3)

'''


def iterated(body: str, use: str = "loader = DALIGenericIterator(pipe, ['x'])\n", decorator="@pipeline_def(batch_size=4)") -> str:
    return convert(
        SOURCES + f"\n{decorator}\ndef p():\n" + textwrap.indent(textwrap.dedent(body), "    ") + "\n\npipe = p()\n" + use,
        header=HEADER,
    )



def test_a_callable_with_batch_info_starts_again_at_iteration_0_with_the_next_epoch():
    out = iterated("return fn.external_source(source=Counter(), batch_info=True)\n")
    assert "dali-migrate:" not in out
    assert "epoch = 0\n" in out
    # (`source` is spelled in the file, as a keyword: the variable is source_2)
    assert "source_iter = map(lambda i: source_2(types.BatchInfo(i, epoch)), itertools.count())" in out
    # where the source ended: None, then the epoch index and a new count from 0 (pipe.reset())
    assert (
        "if source_data is end:\n"
        "yield None  # the source's end: pipe.run() raised StopIteration here; next() starts it again, as after pipe.reset()\n"
        "epoch += 1\n"
        "source_iter = map(lambda i: source_2(types.BatchInfo(i, epoch)), itertools.count())\n"
        "continue\n"
    ) in unindented(out)
    # Counter() is made when the pipeline is, the loop in a generator of its own that rebinds these
    assert "nonlocal epoch, source_iter\n" in out
    assert "loader = DaliTorchSourceIterator(PrefetchedPipeline(pipe), ['x'], batch_size=4)" in out
    assert "class PrefetchedPipeline:" in out and "class DaliTorchSourceIterator:" in out
    assert "self._pipe.reset()" in out and "outputs = self._pipe.share_outputs()" in out


def test_an_iterable_is_iterated_once_and_goes_on_after_the_end():
    out = iterated("return fn.external_source(source=Frames())\n")
    assert "source_iter = iter(source_2)" in out and out.count("iter(source_2)") == 1
    assert "epoch = 0" not in out and "epoch += 1" not in out  # only a callable gets the epoch index
    # the plain form (one batch per item of a `for`) is not what an iterator drives
    assert "for source_data in" not in out


def test_cycle_raise_rewinds_then_ends_the_epoch():
    out = iterated('return fn.external_source(source=Frames(), cycle="raise")\n')
    assert (
        "if source_data is end:\n"
        "source_iter = iter(source_2)\n"
        "if source_data is end:\n"
        "yield None"
    ) in unindented(out)


def test_a_pipeline_run_directly_stays_a_generator_that_ends():
    out = iterated("return fn.external_source(source=Frames())\n", use="pipe.build()\nout = pipe.run()\n")
    assert "yield None" not in out and "for source_data in source_2:" in out


def test_a_pipeline_both_run_and_given_to_an_iterator_is_left_to_a_person():
    out = iterated("return fn.external_source(source=Frames())\n",
                   use="loader = DALIGenericIterator(pipe, ['x'])\nother = p()\nother.build()\nout = other.run()\n")
    assert "@pipeline_def" in out and "both gives to a framework iterator and uses otherwise (pipe-run)" in out


def test_a_source_beside_a_reader_is_left_to_a_person():
    out = iterated("jpegs, labels = fn.readers.file(file_root='d')\nb = fn.external_source(source=Frames())\nreturn jpegs, b\n")
    assert "@pipeline_def" in out and "DaliTorch" not in out
    assert "which it resets where the source ends: fn.external_source beside a reader" in out


def test_a_parallel_source_is_left_to_a_person():
    out = iterated("return fn.external_source(source=Counter(), batch_info=True, parallel=True)\n")
    assert "@pipeline_def" in out and "fn.external_source(parallel=True): DALI's worker pool" in out


def test_several_pipelines_with_sources_are_left_to_a_person():
    out = iterated("return fn.external_source(source=Frames())\n",
                   use="pipe2 = p()\nloader = DALIGenericIterator([pipe, pipe2], ['x'], size=24)\n")
    assert "@pipeline_def" in out and "over several pipelines with fn.external_source" in out


def test_the_prefetch_depth_of_the_decorator_and_of_the_call():
    out = iterated("return fn.external_source(source=Frames())\n", decorator="@pipeline_def(batch_size=4, prefetch_queue_depth=1)")
    assert "DaliTorchSourceIterator(PrefetchedPipeline(pipe, prefetch_queue_depth=1), " in out
    out = iterated("return fn.external_source(source=Frames())\n",
                   use="pipe3 = p(exec_pipelined=False)\nloader = DALIGenericIterator(pipe3, ['x'])\n")
    assert "DaliTorchSourceIterator(PrefetchedPipeline(pipe3, exec_pipelined=False), " in out


def test_a_class_derived_from_the_iterator_gets_the_source_iterator_as_base():
    out = iterated("return fn.external_source(source=Frames())\n",
                   use="class Loader(DALIGenericIterator):\n    pass\n\n\nloader = Loader(pipe, ['x'])\n")
    assert "class Loader(DaliTorchSourceIterator):" in out and "loader = Loader(PrefetchedPipeline(pipe), ['x'], batch_size=4)" in out


def test_the_legacy_iter_setup_ends_an_epoch_where_it_raised():
    src = '''
import numpy as np
import nvidia.dali.ops as ops
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin.paddle import DALIClassificationIterator
from nvidia.dali.plugin.mxnet import LastBatchPolicy


class FeedPipe(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data):
        super().__init__(batch_size, num_threads, device_id)
        self.images = ops.ExternalSource()
        self.labels = ops.ExternalSource()
        self.data = data
        self.it = iter(data)

    def define_graph(self):
        self.jpegs = self.images()
        self.lab = self.labels()
        return self.jpegs, self.lab

    def iter_setup(self):
        try:
            images, labels = next(self.it)
            self.feed_input(self.jpegs, images)
            self.feed_input(self.lab, labels)
        except StopIteration:
            self.it = iter(self.data)
            raise StopIteration


pipe = FeedPipe(2, 1, 0, [([np.zeros(2)] * 2, [np.ones(1)] * 2)] * 3)
loader = DALIClassificationIterator(pipe, size=6, last_batch_policy=LastBatchPolicy.PARTIAL)
'''
    out = convert(src, header="")
    # the MXNet plugin's LastBatchPolicy is base_iterator's, as the Paddle docs' example imports it
    assert "dali-migrate:" not in out
    assert (
        "            except StopIteration:\n"
        "                yield None  # the source's end: pipe.run() raised StopIteration here; next() starts it again, as after pipe.reset()\n"
        "                continue\n"
    ) in out
    assert 'DaliPaddleSourceIterator(PrefetchedPipeline(pipe), ["data", "label"], batch_size=2, size=6, last_batch_policy="PARTIAL")' in out


def test_a_module_path_or_keyword_spelled_like_the_pipeline_variable_is_not_a_use_of_it():
    # `pipeline` of `from nvidia.dali.pipeline import ...` or of `dict(pipeline=...)` is no use of
    # the variable `pipeline`
    out = convert(
        "from nvidia.dali.pipeline import pipeline_def\nimport nvidia.dali.fn as fn\n\n\n"
        "@pipeline_def(batch_size=4)\ndef read():\n    return fn.external_source(source=[[1]])\n\n\n"
        "pipeline = read()\npipeline.build()\nout = pipeline.run()\nsettings = dict(pipeline='read')\n",
        header="",
    )
    assert "dali-migrate:" not in out and "out = next(pipeline)" in out
