"""Pipelines built by hand, one after another, each passed to a helper of the file that builds
it, runs it and prints its outputs, as DALI's general/reductions.ipynb does."""
import itertools
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd
import numpy as np

batch_size = 2


def get_batch():
    return [np.reshape(np.arange(9), (3, 3)) * (i + 1) for i in range(batch_size)]


def run_and_print(pipe):
    output = next(pipe)
    for i, out in enumerate(output):
        if out.device.device_type == "gpu":
            out = out.cpu()
        output_array = np.array(ndd.as_tensor(out))
        print("Output {}:\n{} \n".format(i, output_array))


def pipe_batches(*, batch_size=batch_size, num_threads=4, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    source_2 = get_batch
    for source_data in map(lambda i: source_2(), itertools.count()):
        with ctx:
            input = ndd.batch(source_data)
            max = ndd.reductions.max(input)
            outputs = (max,)
        yield outputs

pipe = pipe_batches()

run_and_print(pipe)

def pipe_batches_50(*, batch_size=batch_size, num_threads=4, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    source_2 = get_batch
    for source_data in map(lambda i: source_2(), itertools.count()):
        with ctx:
            input = ndd.batch(source_data, layout="AB")
            min_axis_0 = ndd.reductions.min(input, axis_names="A")
            sum_axis_1 = ndd.reductions.sum(input, axes=1)
            outputs = min_axis_0, sum_axis_1
        yield outputs

pipe = pipe_batches_50()

run_and_print(pipe)

def pipe_batches_51(*, batch_size=batch_size, num_threads=4, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    source_2 = get_batch
    for source_data in map(lambda i: source_2(), itertools.count()):
        with ctx:
            input = ndd.batch(source_data)
            mean = ndd.reductions.mean(input)
            std_dev = ndd.reductions.std_dev(input, mean, keep_dims=True)
            outputs = mean, std_dev
        yield outputs

pipe = pipe_batches_51()

run_and_print(pipe)
