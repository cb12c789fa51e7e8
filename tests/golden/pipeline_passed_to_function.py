"""Pipelines built by hand, one after another, each passed to a helper of the file that builds
it, runs it and prints its outputs, as DALI's general/reductions.ipynb does."""
import nvidia.dali.fn as fn
import nvidia.dali.types as types
import nvidia.dali.backend as backend
from nvidia.dali.pipeline import Pipeline
import numpy as np

batch_size = 2


def get_batch():
    return [np.reshape(np.arange(9), (3, 3)) * (i + 1) for i in range(batch_size)]


def run_and_print(pipe):
    pipe.build()
    output = pipe.run()
    for i, out in enumerate(output):
        if type(out) == backend.TensorListGPU:
            out = out.as_cpu()
        output_array = out.as_array()
        print("Output {}:\n{} \n".format(i, output_array))


pipe = Pipeline(batch_size=batch_size, num_threads=4, device_id=None)
with pipe:
    input = fn.external_source(source=get_batch)
    max = fn.reductions.max(input)

    pipe.set_outputs(max)

run_and_print(pipe)

pipe = Pipeline(batch_size=batch_size, num_threads=4, device_id=None)
with pipe:
    input = fn.external_source(source=get_batch, layout="AB")
    min_axis_0 = fn.reductions.min(input, axis_names="A")
    sum_axis_1 = fn.reductions.sum(input, axes=1)

    pipe.set_outputs(min_axis_0, sum_axis_1)

run_and_print(pipe)

pipe = Pipeline(batch_size=batch_size, num_threads=4, device_id=None)
with pipe:
    input = fn.external_source(source=get_batch)
    mean = fn.reductions.mean(input)
    std_dev = fn.reductions.std_dev(input, mean, keep_dims=True)

    pipe.set_outputs(mean, std_dev)

run_and_print(pipe)
