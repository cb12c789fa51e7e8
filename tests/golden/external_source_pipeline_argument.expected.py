# golden-run: pipe=reshape_pipe args=(lambda: __import__("numpy").random.randint(0, 10, size=[25], dtype="int32"),) iterations=1
# (one iteration: `verify` runs the pipeline and the generator in turn, so after the first
# batch their draws from numpy's global random state interleave)
"""Reshaping per-sample data that comes in as the pipeline's argument (after DALI's reinterpret example)."""
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


def reshape_pipe(input_data, *, batch_size=3, num_threads=4, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    np.random.seed(1234)
    source = input_data

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        for source_data in map(lambda i: [source() for j in range(batch_size)], itertools.count()):
            with ctx:
                inp = external_source_batch(source_data, types.INT32, copy=True)
                outputs = inp, ndd.reshape(inp, shape=[5, 5], layout="HW")
            yield outputs

    return batches()


pipe = reshape_pipe(lambda: np.random.randint(0, 10, size=[25], dtype=np.int32))
flat, square = next(pipe)
for i in range(flat.batch_size):
    print(f"sample {i}:", np.array(flat.select(i)).shape, "->", np.array(square.select(i)).shape)
    print(np.array(square.select(i)))
