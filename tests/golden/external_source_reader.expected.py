# golden-run: pipe=reader_and_params args=(str(DATA / "images"),) iterations=8
"""External sources beside a reader, and beside each other: per-batch parameters computed in Python."""
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


class BrightnessSchedule:
    """A brightness per sample that changes with the iteration."""

    def __init__(self, batch_size):
        self.batch_size = batch_size

    def __call__(self, info):
        return [np.array(1.0 + 0.1 * ((info.iteration + i) % 5), dtype=np.float32) for i in range(self.batch_size)]


class Frames:
    def __init__(self, n_batches):
        self.n_batches = n_batches

    def __iter__(self):
        for k in range(self.n_batches):
            yield [np.full((4, 6, 3), 40 * k + 20 * i, dtype=np.uint8) for i in range(2)]


def angle(sample_info):
    return np.array(90.0 * (sample_info.idx_in_epoch % 4), dtype=np.float32)


def reader_and_params(data_dir, *, batch_size=4, num_threads=2, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=data_dir)
    end = object()
    source_2 = BrightnessSchedule(4)
    source_iter = map(lambda i: source_2(types.BatchInfo(i, 0)), itertools.count())

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        while True:
            for jpegs, labels in reader.next_epoch(batch_size=batch_size):
                source_data = next(source_iter, end)
                if source_data is end:
                    return
                with ctx:
                    brightness = external_source_batch(source_data, types.FLOAT, copy=True)
                    images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                    images = ndd.resize(images, resize_x=32, resize_y=32)
                    images = ndd.brightness(images, brightness=brightness)
                    outputs = images, labels
                yield outputs

    return batches()


def frames_and_angles(*, batch_size=2, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    end = object()
    source_2 = Frames(3)
    source_iter = iter(source_2)
    source_3 = angle
    source_iter_2 = map(lambda i: [source_3(types.SampleInfo(i * batch_size + j, j, i, 0)) for j in range(batch_size)], itertools.count())

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        while True:
            source_data = next(source_iter, end)
            source_data_2 = next(source_iter_2, end)
            if source_data is end or source_data_2 is end:
                return
            with ctx:
                frames = ndd.batch(source_data, layout="HWC")
                angles = ndd.batch(source_data_2)
                outputs = ndd.rotate(frames, angle=angles, keep_size=True, fill_value=0), angles
            yield outputs

    return batches()
