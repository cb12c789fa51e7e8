# golden-run: pipe=cycle_pipe iterations=8
"""External sources that start over at the end of their data (cycle=)."""
import numpy as np
from nvidia.dali import fn, pipeline_def


class Frames:
    """``n_batches`` batches of two HWC frames; every iter() starts them over."""

    def __init__(self, n_batches):
        self.n_batches = n_batches

    def __iter__(self):
        for k in range(self.n_batches):
            yield [np.full((2, 2, 3), 10 * k + i, dtype=np.uint8) for i in range(2)]


class OnePass:
    """An iterator: iter() gives the same, spent, object back, so it cannot start over."""

    def __init__(self, n):
        self.k, self.n = 0, n

    def __iter__(self):
        return self

    def __next__(self):
        if self.k == self.n:
            raise StopIteration
        self.k += 1
        return [np.full((1,), self.k, dtype=np.int64)] * 2


def numbered():
    for k in range(3):
        yield [np.array([k, -k], dtype=np.int32), np.array([k, k], dtype=np.int32)]


@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def cycle_pipe():
    frames = fn.external_source(source=Frames(3), cycle=True, layout="HWC")
    return fn.flip(frames, horizontal=1)


@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def quiet_generator_pipe():
    x = fn.external_source(source=numbered, cycle="quiet")
    return x * 2


@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def epoch_pipe():
    frames = fn.external_source(source=Frames(3), cycle="raise", layout="HWC")
    return frames


@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def one_pass_pipe():
    x = fn.external_source(source=OnePass(3), cycle=True)
    return x + 1
