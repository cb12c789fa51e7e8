"""A training loop that reads its own files and feeds each batch (pipe.feed_input, then pipe.run()),
with a last batch smaller than batch_size."""
import glob
import os

import numpy as np
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


BATCH = 4


def train_pipe(crop=32, *, batch_size=BATCH, num_threads=2, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)

    def run(**pipeline_inputs):
        with ctx:
            jpegs = external_source_batch(pipeline_inputs["jpegs"], types.UINT8, copy=True)
            labels = external_source_batch(pipeline_inputs["labels"], types.INT32)
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
