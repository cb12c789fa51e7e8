# golden-verify: pipe=sample_pipe iterations=4
# golden-verify: pipe=batch_info_pipe iterations=3
# golden-verify: pipe=iterable_pipe iterations=3
# golden-verify: pipe=generator_pipe iterations=3
import numpy as np
from nvidia.dali import fn, pipeline_def, types


def per_sample(info):
    value = info.idx_in_epoch * 100 + info.idx_in_batch * 10 + info.iteration + info.epoch_idx
    return np.full((2, 3), value, dtype=np.int32)


class Batches:
    def __init__(self, batch_size):
        self.batch_size = batch_size

    def __call__(self, info):
        return [np.full((3,), info.iteration * 10 + info.epoch_idx + i, dtype=np.float32) for i in range(self.batch_size)]


class Frames:
    def __init__(self, n):
        self.frames = [np.arange(12, dtype=np.uint8).reshape(2, 2, 3) + k for k in range(n)]

    def __iter__(self):
        for k in range(0, len(self.frames), 2):
            yield self.frames[k : k + 2]


def counting():
    for k in range(5):
        yield [np.array([k, k + 1], dtype=np.int16), np.array([k * 2, 7], dtype=np.int16)]


@pipeline_def(batch_size=3, num_threads=1, device_id=None)
def sample_pipe():
    x = fn.external_source(source=per_sample, batch=False, layout="HW")
    return x + 1


@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def batch_info_pipe():
    x = fn.external_source(source=Batches(2), batch_info=True, dtype=types.FLOAT)
    return x * 2.0


@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def iterable_pipe():
    frames = fn.external_source(source=Frames(8), layout="HWC")
    return fn.flip(frames, horizontal=1)


@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def generator_pipe():
    x = fn.external_source(source=counting)
    return x
