# golden-run: pipe=example1 iterations=4
"""fn.external_source with its source given by position, as general/reinterpret.ipynb writes it."""
import numpy as np
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import pipeline_def


def single_channel(sample_info):
    n = sample_info.idx_in_epoch
    return np.arange(n, n + 25, dtype=np.int32)


@pipeline_def(num_threads=4, batch_size=3, device_id=None)
def example1():
    inp = fn.external_source(single_channel, batch=False, dtype=types.INT32)
    return inp, fn.reshape(inp, shape=[5, 5], layout="HW")


if __name__ == "__main__":
    pipe1 = example1()
    pipe1.build()
    inp, reshaped = pipe1.run()
    print(reshaped.at(0))
