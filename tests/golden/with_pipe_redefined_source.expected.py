"""Pipelines built by hand, each reading `get_batch`, which a later notebook cell defines again, as
DALI's general/reductions.ipynb does: each pipeline keeps the `get_batch` of its own cell."""
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


# `get_batch` as defined at this point (the file defines it more than once): the pipeline took it here
def pipe_batches(get_batch=get_batch, *, batch_size=batch_size, num_threads=4, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    source_2 = get_batch
    for source_data in map(lambda i: source_2(), itertools.count()):
        with ctx:
            input = ndd.batch(source_data, layout="AB")
            min_axis_0 = ndd.reductions.min(input, axis_names="A")
            outputs = (min_axis_0,)
        yield outputs

pipe = pipe_batches()

# `get_batch` as defined at this point (the file defines it more than once): the pipeline took it here
def later_batches(get_batch=get_batch, *, batch_size=batch_size, num_threads=4, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    source_2 = get_batch
    for source_data in map(lambda i: source_2(), itertools.count()):
        with ctx:
            input = ndd.batch(source_data)
            outputs = (ndd.reductions.sum(input),)
        yield outputs

later = later_batches()


def get_batch():
    return [np.reshape(np.arange(8, dtype=np.int32), (2, 2, 2)) * (i + 1) for i in range(batch_size)]


run_and_print(pipe)
run_and_print(later)

# `get_batch` as defined at this point (the file defines it more than once): the pipeline took it here
def pipe_batches_50(get_batch=get_batch, *, batch_size=batch_size, num_threads=4, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    source_2 = get_batch
    for source_data in map(lambda i: source_2(), itertools.count()):
        with ctx:
            input = ndd.batch(source_data, layout="ABC")
            min_axes_0_1 = ndd.reductions.min(input, axes=(0, 1))
            min_layout_A_C = ndd.reductions.min(input, axis_names="AC")
            outputs = min_axes_0_1, min_layout_A_C
        yield outputs

pipe = pipe_batches_50()

run_and_print(pipe)
