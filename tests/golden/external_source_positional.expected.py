# golden-run: pipe=example1 iterations=4
"""fn.external_source with its source given by position, as general/reinterpret.ipynb writes it."""
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


def single_channel(sample_info):
    n = sample_info.idx_in_epoch
    return np.arange(n, n + 25, dtype=np.int32)


def example1(*, batch_size=3, num_threads=4, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    source = single_channel
    for source_data in map(lambda i: [source(types.SampleInfo(i * batch_size + j, j, i, 0)) for j in range(batch_size)], itertools.count()):
        with ctx:
            inp = external_source_batch(source_data, types.INT32, copy=True)
            outputs = inp, ndd.reshape(inp, shape=[5, 5], layout="HW")
        yield outputs


if __name__ == "__main__":
    pipe1 = example1()
    inp, reshaped = next(pipe1)
    print(np.array(reshaped.select(0)))
