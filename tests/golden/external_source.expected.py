import numpy as np
import itertools
from nvidia.dali import types
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


class Source:
    def __init__(self, batch_size):
        self.batch_size = batch_size

    def __call__(self, info):
        return [np.full((4, 4, 3), info.iteration, dtype=np.uint8) for _ in range(self.batch_size)]


def es_pipe(*, batch_size=4, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    source_2 = Source(4)

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        for source_data in map(source_2, itertools.count()):
            with ctx:
                images = external_source_batch(source_data, types.UINT8, layout="HWC", copy=True)
                outputs = (ndd.flip(images, horizontal=1),)
            yield outputs

    return batches()


pipe = es_pipe()
(out,) = next(pipe)
