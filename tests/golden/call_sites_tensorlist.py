# golden-run: pipe=inspect_pipe args=(str(DATA / "images"),) iterations=12
import numpy as np
from nvidia.dali import fn, pipeline_def


@pipeline_def(batch_size=4, num_threads=1)
def inspect_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs)
    images = fn.resize(images, resize_x=8, resize_y=8)
    return images, labels


def show(root):
    pipe = inspect_pipe(root)
    pipe.build()
    outputs = pipe.run()
    images, labels = outputs
    n = len(images)
    first = images.at(0)
    second = images[1]
    shapes = images.shape()
    third = images[2].shape()
    kind = images.dtype
    host = images.as_cpu()
    dense = images.as_tensor()
    label_array = labels.as_array()
    label_rows = np.asarray(labels)
    print(n, first.shape, np.asarray(second).shape, shapes, third, kind, host.at(0), dense, label_array, label_rows)
    print(np.array(outputs[1].at(0)))
    return label_array
