# golden-run: pipe=simple_pipeline iterations=3
"""@pipeline_def pipelines handed to helpers of the file that build and run them, and outputs
handed to a helper that prints them, as DALI's tutorials write them."""
import numpy as np
from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali.backend import TensorListCPU

left_magic_values = [[[42, 7, 0], [0, 0, 0]], [[5, 10, 15], [10, 100, 1000]]]
right_magic_values = [[[3, 3, 3], [1, 3, 5]], [[1, 5, 5], [1, 1, 1]]]


def get_data():
    return [np.int32(t) for t in left_magic_values], [np.int32(t) for t in right_magic_values]


@pipeline_def(batch_size=2, num_threads=4, device_id=None)
def simple_pipeline():
    l, r = fn.external_source(source=get_data, num_outputs=2, layout=["HW", "HW"])
    return l + r, fn.transpose(l * r, perm=[1, 0])


@pipeline_def(batch_size=2, num_threads=4, device_id=None)
def division_pipeline():
    l, r = fn.external_source(source=get_data, num_outputs=2)
    return l // r


def show(pipe):
    pipe.build()
    sums, products = pipe.run()
    for i in range(len(sums)):
        print(sums.at(i), products.at(i).shape)


def examine_output(pipe_out):
    for out in pipe_out:
        if isinstance(out, TensorListCPU):
            print("on the CPU:", out.as_array())


def run_twice(pipe, times=2):
    pipe.build()
    for _ in range(times):
        examine_output(pipe.run())


show(simple_pipeline())
pipe = division_pipeline()
run_twice(pipe)
out = pipe.run()
examine_output(out)
