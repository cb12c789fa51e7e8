# golden-run: pipe=val_pipe args=(str(DATA / "images"),) iterations=12
"""Validation over whole epochs of a file reader: the loop counts the steps from the reader's
epoch size and resets the pipeline after each epoch, as scripts that run the pipeline
themselves (no framework iterator) do."""
import math

import numpy as np
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd

BATCH = 4


def val_pipe(data_dir, *, batch_size=BATCH, num_threads=2, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=data_dir, pad_last_batch=True)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                images = ndd.resize(images, resize_x=32, resize_y=32)
                images = ndd.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW", mean=[128.0] * 3, std=[64.0] * 3)
                outputs = images, labels
            yield outputs


def evaluate(data_dir, epochs=2):
    pipe = val_pipe(data_dir)
    steps = math.ceil(ndd.readers.File(file_root=data_dir, pad_last_batch=True).get_metadata()["epoch_size_padded"] / BATCH)
    for epoch in range(epochs):
        total = 0.0
        for _ in range(steps):
            images, labels = next(pipe)
            total += float(np.mean(np.array(ndd.as_tensor(images.cpu()))))
        print(f"epoch {epoch}: mean {total / steps:.4f}")


if __name__ == "__main__":
    evaluate("/data/imagenet/val")
