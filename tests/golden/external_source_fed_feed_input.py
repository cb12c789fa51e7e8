"""A training loop that reads its own files and feeds each batch (pipe.feed_input, then pipe.run()),
with a last batch smaller than batch_size."""
import glob
import os

import numpy as np
from nvidia.dali import fn, pipeline_def, types

BATCH = 4


@pipeline_def(batch_size=BATCH, num_threads=2, device_id=0, prefetch_queue_depth=1)
def train_pipe(crop=32):
    jpegs = fn.external_source(name="jpegs", dtype=types.UINT8)
    labels = fn.external_source(name="labels", dtype=types.INT32, no_copy=True)
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, resize_x=crop, resize_y=crop)
    images = fn.crop_mirror_normalize(
        images, dtype=types.FLOAT, output_layout="CHW", mean=[0.485 * 255, 0.456 * 255, 0.406 * 255], std=[58.4, 57.1, 57.4]
    )
    return images, labels.gpu()


def read_samples(root):
    classes = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
    samples = []
    for label, name in enumerate(classes):
        for path in sorted(glob.glob(os.path.join(root, name, "*.jpg"))):
            samples.append((path, label))
    return samples


def train(root, epochs=2):
    samples = read_samples(root)
    pipe = train_pipe(crop=24)
    pipe.build()
    seen = []
    for epoch in range(epochs):
        for start in range(0, len(samples), BATCH):
            chunk = samples[start : start + BATCH]
            jpegs = [np.fromfile(path, dtype=np.uint8) for path, _ in chunk]
            labels = np.array([[label] for _, label in chunk], dtype=np.int32)
            try:
                pipe.feed_input("jpegs", jpegs)
                pipe.feed_input("labels", labels)
                images, targets = pipe.run()
            except RuntimeError:
                seen.append(None)
                continue
            seen.append((np.asarray(images.as_cpu().as_tensor()), np.asarray(targets.as_cpu().as_tensor())))
    return seen
