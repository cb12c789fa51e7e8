import numpy as np
import itertools
from nvidia.dali import types
import nvidia.dali.experimental.dynamic as ndd


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
                images = ndd.as_batch(source_data, layout="HWC", dtype=types.UINT8)
                outputs = (ndd.flip(images, horizontal=1),)
            yield outputs

    return batches()


pipe = es_pipe()
(out,) = next(pipe)
