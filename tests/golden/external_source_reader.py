# golden-run: pipe=reader_and_params args=(str(DATA / "images"),) iterations=8
"""External sources beside a reader, and beside each other: per-batch parameters computed in Python."""
import numpy as np
from nvidia.dali import fn, pipeline_def, types


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


@pipeline_def(batch_size=4, num_threads=2, device_id=0)
def reader_and_params(data_dir):
    jpegs, labels = fn.readers.file(file_root=data_dir, name="Reader")
    brightness = fn.external_source(source=BrightnessSchedule(4), batch_info=True, dtype=types.FLOAT)
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, resize_x=32, resize_y=32)
    images = fn.brightness(images, brightness=brightness)
    return images, labels


@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def frames_and_angles():
    frames = fn.external_source(source=Frames(3), layout="HWC")
    angles = fn.external_source(source=angle, batch=False)
    return fn.rotate(frames, angle=angles, keep_size=True, fill_value=0), angles
