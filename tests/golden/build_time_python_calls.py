# golden-run: pipe=eval_pipe args=(str(DATA / "images"),) iterations=8
"""Python calls inside a pipeline run once, when the pipeline is built: every batch below is
resized to the same size and rotated by the same angle, however many batches are drawn."""
import argparse
import random

import numpy as np
from nvidia.dali import fn, pipeline_def, types

SIZES = [24, 32, 40, 48, 56, 64]


def next_size():
    """A different size on every call (a pipeline calls it once, at build time)."""
    return SIZES.pop(0)


@pipeline_def(batch_size=4, num_threads=2, device_id=0)
def eval_pipe(data_dir, scale=1.0):
    jpegs, labels = fn.readers.file(file_root=data_dir, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, resize_x=next_size(), resize_y=next_size())
    images = fn.crop_mirror_normalize(
        images,
        dtype=types.FLOAT,
        mean=np.array([0.485, 0.456, 0.406]) * 255,  # the same every call: left in the loop
        std=[255.0 * scale] * 3,
    )
    return images * float(len(SIZES)), labels


@pipeline_def(batch_size=8, num_threads=4, device_id=0, seed=42)
def train_pipe(data_dir, max_angle):
    jpegs, labels = fn.readers.file(file_root=data_dir, random_shuffle=True, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed")
    # one angle for the whole run: random.uniform is Python, not fn.random.uniform
    images = fn.rotate(images, angle=random.uniform(-max_angle, max_angle), fill_value=0)
    images = fn.resize(images, size=[np.random.randint(200, 256)] * 2)
    return images, labels


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("data_dir")
    args = parser.parse_args()
    pipe = train_pipe(args.data_dir, max_angle=15.0)
    pipe.build()
    for _ in range(10):
        images, labels = pipe.run()
