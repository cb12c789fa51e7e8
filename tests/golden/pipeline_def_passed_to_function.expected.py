# golden-run: pipe=simple_pipeline iterations=3
"""@pipeline_def pipelines handed to helpers of the file that build and run them, and outputs
handed to a helper that prints them, as DALI's tutorials write them."""
import numpy as np
import itertools
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd

left_magic_values = [[[42, 7, 0], [0, 0, 0]], [[5, 10, 15], [10, 100, 1000]]]
right_magic_values = [[[3, 3, 3], [1, 3, 5]], [[1, 5, 5], [1, 1, 1]]]


def get_data():
    return [np.int32(t) for t in left_magic_values], [np.int32(t) for t in right_magic_values]


def simple_pipeline(*, batch_size=2, num_threads=4, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    source_2 = get_data
    for source_data in map(lambda i: source_2(), itertools.count()):
        with ctx:
            l, r = ndd.batch(source_data[0], layout="HW"), ndd.batch(source_data[1], layout="HW")
            outputs = l + r, ndd.transpose(l * r, perm=[1, 0])
        yield outputs


def division_pipeline(*, batch_size=2, num_threads=4, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    source_2 = get_data
    for source_data in map(lambda i: source_2(), itertools.count()):
        with ctx:
            l, r = ndd.batch(source_data[0]), ndd.batch(source_data[1])
            outputs = (l // r,)
        yield outputs


def show(pipe):
    sums, products = next(pipe)
    for i in range(sums.batch_size):
        print(np.array(sums.select(i)), np.array(products.select(i)).shape)


def examine_output(pipe_out):
    for out in pipe_out:
        if out.device.device_type == "cpu":
            print("on the CPU:", np.array(ndd.as_tensor(out)))


def run_twice(pipe, times=2):
    for _ in range(times):
        examine_output(next(pipe))


show(simple_pipeline())
pipe = division_pipeline()
run_twice(pipe)
out = next(pipe)
examine_output(out)
