import numpy as np
from nvidia.dali import fn, pipeline_def, types


class Source:
    def __init__(self, batch_size):
        self.batch_size = batch_size

    def __call__(self, info):
        return [np.full((4, 4, 3), info.iteration, dtype=np.uint8) for _ in range(self.batch_size)]


# dali-migrate: [pipeline-def] pipeline not converted: fn.external_source: feed the data with ndd.as_batch(...) inside the loop instead (not converted automatically yet)
@pipeline_def(batch_size=4, num_threads=1)
def es_pipe():
    images = fn.external_source(source=Source(4), batch=True, layout="HWC", dtype=types.UINT8)
    return fn.flip(images, horizontal=1)


pipe = es_pipe()
pipe.build()
(out,) = pipe.run()
