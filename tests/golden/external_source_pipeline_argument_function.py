# golden-run: pipe=squeeze_pipe args=(lambda info: __import__("numpy").full([1, info.idx_in_batch + 1, 3], info.idx_in_epoch, dtype="int32"),) iterations=12
"""Squeezing and expanding dims of samples made by a function the caller passes in, from the
sample's place in the epoch."""
import numpy as np
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import pipeline_def


@pipeline_def(batch_size=3, num_threads=4, device_id=0)
def squeeze_pipe(input_data):
    inp = fn.external_source(input_data, batch=False, layout="CHW", dtype=types.INT32)
    squeezed = fn.squeeze(inp, axes=[0])
    expanded = fn.expand_dims(squeezed, axes=[0, 3], new_axis_names="FC")
    return inp, squeezed, expanded


def single_channel(sample_info):
    return np.full([1, 4, 4], sample_info.idx_in_epoch, dtype=np.int32)


def single_channel_wide(sample_info):
    return np.arange(2 * 9, dtype=np.int32).reshape(1, 2, 9) + sample_info.iteration


def show(inp, squeezed, expanded):
    for i in range(len(inp)):
        print(np.array(inp[i]).shape, np.array(squeezed[i]).shape, np.array(expanded[i]).shape)


if __name__ == "__main__":
    pipe = squeeze_pipe(single_channel)
    pipe.build()
    inp, squeezed, expanded = pipe.run()
    show(inp, squeezed, expanded)

    wide = squeeze_pipe(input_data=single_channel_wide)
    wide.build()
    inp, squeezed, expanded = wide.run()
    show(inp, squeezed, expanded)
