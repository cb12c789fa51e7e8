# golden-run: pipe=python_run_pipe args=(str(DATA / "images"),) iterations=7
"""python_function as projects use it: a per-sample NumPy function (returning views too), a
function over whole batches, and one with two outputs."""
import numpy as np
from nvidia.dali import fn, pipeline_def, types


def flip_and_transpose(image):
    return np.ascontiguousarray(image[:, ::-1]).transpose(2, 0, 1)


def brightness(images, labels):
    return [image // 2 + label.astype(np.uint8) for image, label in zip(images, labels)]


def split_channels(image):
    return image[..., 0], image[..., 1:].astype(np.float32) / 255.0


@pipeline_def(batch_size=4, num_threads=1, exec_async=False, exec_pipelined=False)
def python_run_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    images = fn.resize(images, resize_x=16, resize_y=12)
    chw = fn.python_function(images, function=flip_and_transpose, output_layouts="CHW")
    darker = fn.python_function(images, labels, function=brightness, batch_processing=True)
    red, rest = fn.python_function(images, function=split_channels, num_outputs=2, output_layouts=["HW", "HWC"])
    sizes = fn.python_function(jpegs, function=lambda data: np.array([data.size], dtype=np.int64))
    return chw, darker, red, rest, sizes, labels
