# golden-run: pipe=python_run_pipe args=(str(DATA / "images"),) iterations=7
"""python_function as projects use it: a per-sample NumPy function (returning views too), a
function over whole batches, and one with two outputs."""
import numpy as np
from nvidia.dali import types
import nvidia.dali.experimental.dynamic as ndd


def flip_and_transpose(image):
    return np.ascontiguousarray(image[:, ::-1]).transpose(2, 0, 1)


def brightness(images, labels):
    return [image // 2 + label.astype(np.uint8) for image, label in zip(images, labels)]


def split_channels(image):
    return image[..., 0], image[..., 1:].astype(np.float32) / 255.0


def python_run_pipe(root, *, batch_size=4, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=root)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, output_type=types.RGB)
                images = ndd.resize(images, resize_x=16, resize_y=12)
                chw = ndd.as_batch([np.asarray(flip_and_transpose(np.asarray(sample)), order="C") for sample in images], layout="CHW")
                darker = ndd.as_batch([np.asarray(out, order="C") for out in brightness([np.asarray(images_sample) for images_sample in images], [np.asarray(labels_sample) for labels_sample in labels])])
                red, rest = [ndd.as_batch([np.asarray(out, order="C") for out in output], layout=layout) for output, layout in zip(zip(*[split_channels(np.asarray(sample)) for sample in images]), ["HW", "HWC"])]
                sizes = ndd.as_batch([np.asarray((lambda data: np.array([data.size], dtype=np.int64))(np.asarray(sample)), order="C") for sample in jpegs])
                outputs = chw, darker, red, rest, sizes, labels
            yield outputs
