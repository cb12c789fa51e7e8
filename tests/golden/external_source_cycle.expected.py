# golden-run: pipe=cycle_pipe iterations=8
"""External sources that start over at the end of their data (cycle=)."""
import numpy as np
import nvidia.dali.experimental.dynamic as ndd


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


def cycle_pipe(*, batch_size=2, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    end = object()
    source_2 = Frames(3)
    source_iter = iter(source_2)

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        nonlocal source_iter
        while True:
            source_data = next(source_iter, end)
            if source_data is end:
                source_iter = iter(source_2)
                source_data = next(source_iter, end)
            if source_data is end:
                return
            with ctx:
                frames = ndd.batch(source_data, layout="HWC")
                outputs = (ndd.flip(frames, horizontal=1),)
            yield outputs

    return batches()


def quiet_generator_pipe(*, batch_size=2, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    end = object()
    source_2 = numbered
    source_iter = source_2()
    while True:
        source_data = next(source_iter, end)
        if source_data is end:
            source_iter = source_2()
            source_data = next(source_iter, end)
        if source_data is end:
            return
        with ctx:
            x = ndd.batch(source_data)
            outputs = (x * 2,)
        yield outputs


def epoch_pipe(*, batch_size=2, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    end = object()
    source_2 = Frames(3)
    source_iter = iter(source_2)

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        nonlocal source_iter
        while True:
            source_data = next(source_iter, end)
            if source_data is end:
                source_iter = iter(source_2)
                return
            with ctx:
                frames = ndd.batch(source_data, layout="HWC")
                outputs = (frames,)
            yield outputs

    return batches()


def one_pass_pipe(*, batch_size=2, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    end = object()
    source_2 = OnePass(3)
    source_iter = iter(source_2)

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        nonlocal source_iter
        while True:
            source_data = next(source_iter, end)
            if source_data is end:
                source_iter = iter(source_2)
                source_data = next(source_iter, end)
            if source_data is end:
                return
            with ctx:
                x = ndd.batch(source_data)
                outputs = (x + 1,)
            yield outputs

    return batches()
