"""Helpers that get a pipeline but cannot be followed stay as they were, with the pipelines they get."""
import numpy as np
from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn


def get_data():
    return [np.arange(3, dtype=np.int32)] * 2


@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def add_one():
    return fn.external_source(source=get_data) + 1


@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def times_two():
    return fn.external_source(source=get_data) * 2


@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def minus_one():
    return fn.external_source(source=get_data) - 1


def run(pipe):
    pipe.build()
    return pipe.run()


def describe(pipe_or_name):
    if isinstance(pipe_or_name, str):
        print(pipe_or_name)
    else:
        pipe_or_name.build()
        print(pipe_or_name.run())


def benchmark(pipe):
    pipe.build()
    for _ in range(3):
        pipe.run()
    pipe.reset()


def examine_output(pipe_out):
    print(pipe_out[0].as_array())


outputs = run(add_one())
describe(times_two())
describe("no pipeline")
benchmark(minus_one())
pipe = add_one()
pipe.build()
examine_output(pipe.run())


def examine_output(pipe_out):
    print(pipe_out[0].at(0))
