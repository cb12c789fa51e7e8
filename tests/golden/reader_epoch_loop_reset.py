# golden-run: pipe=val_pipe args=(str(DATA / "images"),) iterations=12
"""Validation over whole epochs of a file reader: the loop counts the steps from the reader's
epoch size and resets the pipeline after each epoch, as scripts that run the pipeline
themselves (no framework iterator) do."""
import math

import numpy as np
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import pipeline_def

BATCH = 4


@pipeline_def(batch_size=BATCH, num_threads=2, device_id=0)
def val_pipe(data_dir):
    jpegs, labels = fn.readers.file(file_root=data_dir, name="Reader", pad_last_batch=True)
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, resize_x=32, resize_y=32)
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW", mean=[128.0] * 3, std=[64.0] * 3)
    return images, labels


def evaluate(data_dir, epochs=2):
    pipe = val_pipe(data_dir)
    pipe.build()
    steps = math.ceil(pipe.epoch_size("Reader") / BATCH)
    for epoch in range(epochs):
        total = 0.0
        for _ in range(steps):
            images, labels = pipe.run()
            total += float(np.mean(images.as_cpu().as_array()))
        pipe.reset()
        print(f"epoch {epoch}: mean {total / steps:.4f}")


if __name__ == "__main__":
    evaluate("/data/imagenet/val")
