"""Pipeline functions passed to a function of the file that makes the pipelines itself
(pipe_params.ParamAlias), as DALI's conv_perf notebook does: what converts, and what stays marked.
The golden case pipeline_function_passed_to_benchmark runs the converted pipeline against DALI."""

from __future__ import annotations

import textwrap

from dali_migrate.engine import convert_source

HEAD = '''\
import numpy as np
import nvidia.dali.fn as fn
from nvidia.dali import pipeline_def


@pipeline_def
def box_pipe(root, window_size=3):
    jpegs, labels = fn.readers.file(file_root=root, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed")
    return fn.filter(images, np.full((window_size, window_size), 1. / window_size ** 2, dtype=np.float32)), labels


@pipeline_def
def blur_pipe(root, window_size=3):
    jpegs, labels = fn.readers.file(file_root=root, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed")
    return fn.gaussian_blur(images, window_size=window_size), labels


def run_pipeline(pipe, iters):
    for _ in range(iters):
        pipe.run()


'''

BENCH = '''\
def benchmark(pipeline, batch_size, window_size=3):
    pipe = pipeline("/data", num_threads=4, batch_size=batch_size, device_id=0, window_size=window_size)
    pipe.build()
    run_pipeline(pipe, 10)


benchmark(box_pipe, 128, window_size=3)
benchmark(blur_pipe, 128, window_size=7)
'''


def _convert(body: str, head: str = HEAD):
    result = convert_source(head + textwrap.dedent(body))
    return result.output, [m.reason for m in result.markers]


def test_pipes_made_from_the_parameter_get_the_call_site_rewrites():
    out, reasons = _convert(BENCH)
    assert reasons == [], out
    assert "@pipeline_def" not in out and "pipe.build()" not in out
    assert "def box_pipe(root, window_size=3, *, batch_size" in out
    assert "def blur_pipe(root, window_size=3, *, batch_size" in out
    assert '    pipe = pipeline("/data", num_threads=4, batch_size=batch_size, device_id=0, window_size=window_size)\n' in out
    assert "        next(pipe)\n" in out
    assert "benchmark(box_pipe, 128, window_size=3)\nbenchmark(blur_pipe, 128, window_size=7)\n" in out


def test_asking_the_parameter_its_name_is_kept():
    out, reasons = _convert(BENCH.replace("    pipe.build()\n", "    pipe.build()\n    print(pipeline.__name__)\n"))
    assert reasons == [], out
    assert "    print(pipeline.__name__)\n" in out and "pipe.build()" not in out


def test_a_call_passing_something_else_leaves_every_pipeline_passed_marked():
    out, reasons = _convert(BENCH + "benchmark(make_other_pipe(), 128)\n")
    assert "@pipeline_def" in out and "pipe.build()" in out
    assert any("benchmark() gets pipeline functions in `pipeline` (box_pipe, blur_pipe), but here something" in r
               for r in reasons), reasons


def test_the_parameter_used_other_than_by_calling_it_is_marked():
    body = BENCH.replace("    pipe.build()\n", "    pipe.build()\n    made.append(pipeline)\n")
    out, reasons = _convert("made = []\n" + body)
    assert "@pipeline_def" in out and "pipe.build()" in out
    assert any("benchmark() gets a pipeline function in `pipeline` and uses it here other than by calling it" in r
               for r in reasons), reasons


def test_the_parameter_assigned_in_the_function_is_marked():
    body = BENCH.replace("    pipe = pipeline(", "    pipeline = pipeline or box_pipe\n    pipe = pipeline(")
    out, reasons = _convert(body)
    assert "@pipeline_def" in out
    assert any("benchmark() assigns its parameter `pipeline`, which gets a pipeline function" in r for r in reasons), reasons


def _blur_reader(args: str) -> str:
    head = HEAD.replace('jpegs, labels = fn.readers.file(file_root=root, name="Reader")\n    images = fn.decoders.image(jpegs, device="mixed")\n    return fn.gaussian_blur',
                        f'jpegs, labels = fn.readers.file(file_root=root, {args}name="Reader")\n    images = fn.decoders.image(jpegs, device="mixed")\n    return fn.gaussian_blur')
    assert head != HEAD
    return head


EPOCH_BENCH = BENCH.replace("    run_pipeline(pipe, 10)\n", '    run_pipeline(pipe, pipe.epoch_size("Reader") // batch_size)\n')


def test_rewrites_that_differ_between_the_pipelines_passed_are_marked():
    # each pipeline's epoch size is read from its own reader: one line of code cannot say both
    out, reasons = _convert(EPOCH_BENCH, _blur_reader("pad_last_batch=True, "))
    assert "@pipeline_def" in out
    assert any("benchmark() would need different code here for the pipeline functions it gets in `pipeline` (box_pipe, blur_pipe)" in r
               for r in reasons), reasons


def test_readers_that_differ_only_in_shuffling_need_the_same_code():
    # the reader written again for the epoch size leaves shuffling out
    out, reasons = _convert(EPOCH_BENCH, _blur_reader("random_shuffle=True, "))
    assert reasons == [] and "@pipeline_def" not in out, reasons
    assert 'run_pipeline(pipe, ndd.readers.File(file_root="/data").get_metadata()["epoch_size_padded"] // batch_size)' in out


def test_one_pipeline_left_leaves_the_others_passed_with_it():
    # pipe.serialize() has no rule: the shared body stays, so both pipelines stay
    head = HEAD.replace("        pipe.run()\n", "        pipe.run()\n    pipe.serialize()\n")
    out, reasons = _convert(BENCH, head)
    assert out.count("@pipeline_def") == 2 and "pipe.build()" in out
    assert any("pipe.serialize() has no automatic dynamic-mode conversion" in r for r in reasons), reasons


def test_external_source_parameter_is_followed_through_the_calls_of_the_parameter():
    head = '''\
import numpy as np
import nvidia.dali.fn as fn
from nvidia.dali import pipeline_def


def get_data():
    return [np.ones((2, 2), dtype=np.float32)] * 4


@pipeline_def(batch_size=4)
def box_pipe(cb, window_size=3):
    images = fn.external_source(cb, batch=True)
    return fn.filter(images, np.full((window_size, window_size), 1. / window_size ** 2, dtype=np.float32))


def bench(pipeline, source):
    pipe = pipeline(get_data, num_threads=4, device_id=None, window_size=5)
    pipe.build()
    return pipe.run()


bench(box_pipe, 1)
'''
    out, reasons = _convert("", head)
    assert reasons == [], out
    assert "def box_pipe(cb, window_size=3, *, batch_size=4" in out and "    return next(pipe)\n" in out
    # a source the calling function computes is not followed there
    out, reasons = _convert("", head.replace("pipeline(get_data,", "pipeline(source,"))
    assert "@pipeline_def" in out
    assert any("the source `cb` is a parameter of box_pipe(), and a call passes `source`, a name of the function it is called in" in r
               for r in reasons), reasons
