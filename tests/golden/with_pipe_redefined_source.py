"""Pipelines built by hand, each reading `get_batch`, which a later notebook cell defines again, as
DALI's general/reductions.ipynb does: each pipeline keeps the `get_batch` of its own cell."""
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
    input = fn.external_source(source=get_batch, layout="AB")
    min_axis_0 = fn.reductions.min(input, axis_names="A")

    pipe.set_outputs(min_axis_0)

later = Pipeline(batch_size=batch_size, num_threads=4, device_id=None)
with later:
    input = fn.external_source(source=get_batch)
    later.set_outputs(fn.reductions.sum(input))


def get_batch():
    return [np.reshape(np.arange(8, dtype=np.int32), (2, 2, 2)) * (i + 1) for i in range(batch_size)]


run_and_print(pipe)
run_and_print(later)

pipe = Pipeline(batch_size=batch_size, num_threads=4, device_id=None)
with pipe:
    input = fn.external_source(source=get_batch, layout="ABC")
    min_axes_0_1 = fn.reductions.min(input, axes=(0, 1))
    min_layout_A_C = fn.reductions.min(input, axis_names="AC")

    pipe.set_outputs(min_axes_0_1, min_layout_A_C)

run_and_print(pipe)
