"""A training loop that reads its own files and feeds each batch (pipe.feed_input, then pipe.run()),
with a last batch smaller than batch_size."""
import glob
import os

import numpy as np
from nvidia.dali import types
import nvidia.dali.experimental.dynamic as ndd

BATCH = 4


def train_pipe(crop=32, *, batch_size=BATCH, num_threads=2, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)

    def run(**pipeline_inputs):
        with ctx:
            jpegs = ndd.batch(pipeline_inputs["jpegs"], dtype=types.UINT8)
            labels = ndd.as_batch(pipeline_inputs["labels"], dtype=types.INT32)
            images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
            images = ndd.resize(images, resize_x=crop, resize_y=crop)
            images = ndd.crop_mirror_normalize(
                images, dtype=types.FLOAT, output_layout="CHW", mean=[0.485 * 255, 0.456 * 255, 0.406 * 255], std=[58.4, 57.1, 57.4]
            )
            outputs = images, labels.gpu()
            for output in outputs:
                output.evaluate()  # raises here if the run failed, as pipe.run() did
            return outputs

    return run


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
    seen = []
    for epoch in range(epochs):
        for start in range(0, len(samples), BATCH):
            chunk = samples[start : start + BATCH]
            jpegs = [np.fromfile(path, dtype=np.uint8) for path, _ in chunk]
            labels = np.array([[label] for _, label in chunk], dtype=np.int32)
            try:
                images, targets = pipe(jpegs=jpegs, labels=labels)
            except RuntimeError:
                seen.append(None)
                continue
            seen.append((np.asarray(ndd.as_tensor(images.cpu())), np.asarray(ndd.as_tensor(targets.cpu()))))
    return seen
