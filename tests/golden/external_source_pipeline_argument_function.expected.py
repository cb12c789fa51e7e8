# golden-run: pipe=squeeze_pipe args=(lambda info: __import__("numpy").full([1, info.idx_in_batch + 1, 3], info.idx_in_epoch, dtype="int32"),) iterations=12
"""Squeezing and expanding dims of samples made by a function the caller passes in, from the
sample's place in the epoch."""
import numpy as np
import itertools
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


def external_source_batch(data, dtype, copy=False, **kwargs):
    """fn.external_source(dtype=...) as a pipeline runs it (added by dali-migrate): the source's
    data must already be of that type; ndd.as_batch(dtype=...) would convert it instead."""
    if isinstance(data, (list, tuple)) and not data:
        return (ndd.batch if copy else ndd.as_batch)(data, dtype=dtype, **kwargs)
    batch = (ndd.batch if copy else ndd.as_batch)(data, **kwargs)
    if batch.dtype != ndd.dtype(dtype):
        raise RuntimeError(
            f"ExternalSource expected data of type {ndd.dtype(dtype)} and got: {batch.dtype}"
        )
    return batch


def squeeze_pipe(input_data, *, batch_size=3, num_threads=4, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    source = input_data
    for source_data in map(lambda i: [source(types.SampleInfo(i * batch_size + j, j, i, 0)) for j in range(batch_size)], itertools.count()):
        with ctx:
            inp = external_source_batch(source_data, types.INT32, layout="CHW", copy=True)
            squeezed = ndd.squeeze(inp, axes=[0])
            expanded = ndd.expand_dims(squeezed, axes=[0, 3], new_axis_names="FC")
            outputs = inp, squeezed, expanded
        yield outputs


def single_channel(sample_info):
    return np.full([1, 4, 4], sample_info.idx_in_epoch, dtype=np.int32)


def single_channel_wide(sample_info):
    return np.arange(2 * 9, dtype=np.int32).reshape(1, 2, 9) + sample_info.iteration


def show(inp, squeezed, expanded):
    for i in range(inp.batch_size):
        print(np.array(inp.select(i)).shape, np.array(squeezed.select(i)).shape, np.array(expanded.select(i)).shape)


if __name__ == "__main__":
    pipe = squeeze_pipe(single_channel)
    inp, squeezed, expanded = next(pipe)
    show(inp, squeezed, expanded)

    wide = squeeze_pipe(input_data=single_channel_wide)
    inp, squeezed, expanded = next(wide)
    show(inp, squeezed, expanded)
