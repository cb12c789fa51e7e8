# golden-run: pipe=eval_pipe args=(str(DATA / "images"),) iterations=8
"""Python calls inside a pipeline run once, when the pipeline is built: every batch below is
resized to the same size and rotated by the same angle, however many batches are drawn."""
import argparse
import random

import numpy as np
import secrets
from nvidia.dali import types
import nvidia.dali.experimental.dynamic as ndd

SIZES = [24, 32, 40, 48, 56, 64]


def next_size():
    """A different size on every call (a pipeline calls it once, at build time)."""
    return SIZES.pop(0)


def eval_pipe(data_dir, scale=1.0, *, batch_size=4, num_threads=2, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=data_dir)
    # evaluated once, as when the pipeline was built
    resize_x = next_size()
    resize_y = next_size()

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        while True:
            for jpegs, labels in reader.next_epoch(batch_size=batch_size):
                with ctx:
                    images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                    images = ndd.resize(images, resize_x=resize_x, resize_y=resize_y)
                    images = ndd.crop_mirror_normalize(
                        images,
                        dtype=types.FLOAT,
                        mean=np.array([0.485, 0.456, 0.406]) * 255,  # the same every call: left in the loop
                        std=[255.0 * scale] * 3,
                    )
                    outputs = images * float(len(SIZES)), labels
                yield outputs

    return batches()


def train_pipe(data_dir, max_angle, *, batch_size=8, num_threads=4, device_id=0, seed=42):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    reader = ndd.readers.File(file_root=data_dir, random_shuffle=True, seed=seed_or_random)
    # evaluated once, as when the pipeline was built
    angle = random.uniform(-max_angle, max_angle)
    value = np.random.randint(200, 256)

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        while True:
            for jpegs, labels in reader.next_epoch(batch_size=batch_size):
                with ctx:
                    images = ndd.decoders.image(jpegs, device="gpu")
                    # one angle for the whole run: random.uniform is Python, not fn.random.uniform
                    images = ndd.rotate(images, angle=angle, fill_value=0)
                    images = ndd.resize(images, size=[value] * 2)
                    outputs = images, labels
                yield outputs

    return batches()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("data_dir")
    args = parser.parse_args()
    pipe = train_pipe(args.data_dir, max_angle=15.0)
    for _ in range(10):
        images, labels = next(pipe)
