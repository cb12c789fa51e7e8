"""Helpers that get a pipeline but cannot be followed stay as they were, with the pipelines they get."""
import numpy as np
from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn


def get_data():
    return [np.arange(3, dtype=np.int32)] * 2


# dali-migrate: [pipeline-def] not converted: some uses of this pipeline in this file need a person (see the markers there)
@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def add_one():
    return fn.external_source(source=get_data) + 1


# dali-migrate: [pipeline-def] not converted: some uses of this pipeline in this file need a person (see the markers there)
@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def times_two():
    return fn.external_source(source=get_data) * 2


# dali-migrate: [pipeline-def] not converted: some uses of this pipeline in this file need a person (see the markers there)
@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def minus_one():
    return fn.external_source(source=get_data) - 1


def run(pipe):
    pipe.build()
    # dali-migrate: [call-site] run() returns what it got in `pipe` (or its outputs), which dali-migrate does not follow to its callers: convert by hand
    return pipe.run()


def describe(pipe_or_name):
    # dali-migrate: [call-site] the pipeline object `pipe_or_name` is used by `if isinstance(pipe_or_name, str):` in a way dali-migrate cannot follow (e.g. passed to an iterator); convert by hand
    if isinstance(pipe_or_name, str):
        print(pipe_or_name)
    else:
        pipe_or_name.build()
        print(pipe_or_name.run())


def benchmark(pipe):
    pipe.build()
    for _ in range(3):
        pipe.run()
    # dali-migrate: [call-site] pipe.reset() of minus_one: its source `get_data` is a callable, which reset() calls again after StopIteration, where the converted generator has ended: convert by hand
    pipe.reset()


def examine_output(pipe_out):
    print(pipe_out[0].as_array())


outputs = run(add_one())
describe(times_two())
# dali-migrate: [call-site] describe() gets a pipeline in `pipe_or_name` elsewhere, but here something dali-migrate cannot follow: convert describe() and its calls by hand
describe("no pipeline")
benchmark(minus_one())
pipe = add_one()
pipe.build()
examine_output(pipe.run())


def examine_output(pipe_out):
    print(pipe_out[0].at(0))
