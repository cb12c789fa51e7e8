# golden-verify: pipe=sample_pipe iterations=4
# golden-verify: pipe=batch_info_pipe iterations=3
# golden-verify: pipe=iterable_pipe iterations=3
# golden-verify: pipe=generator_pipe iterations=3
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


def sample_pipe(*, batch_size=3, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    source_2 = per_sample
    for source_data in map(lambda i: [source_2(types.SampleInfo(i * batch_size + j, j, i, 0)) for j in range(batch_size)], itertools.count()):
        with ctx:
            x = ndd.batch(source_data, layout="HW")
            outputs = (x + 1,)
        yield outputs


def batch_info_pipe(*, batch_size=2, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    source_2 = Batches(2)

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        for source_data in map(lambda i: source_2(types.BatchInfo(i, 0)), itertools.count()):
            with ctx:
                x = external_source_batch(source_data, types.FLOAT, copy=True)
                outputs = (x * 2.0,)
            yield outputs

    return batches()


def iterable_pipe(*, batch_size=2, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    source_2 = Frames(8)

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        for source_data in source_2:
            with ctx:
                frames = ndd.batch(source_data, layout="HWC")
                outputs = (ndd.flip(frames, horizontal=1),)
            yield outputs

    return batches()


def generator_pipe(*, batch_size=2, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    source_2 = counting
    for source_data in source_2():
        with ctx:
            x = ndd.batch(source_data)
            outputs = (x,)
        yield outputs
