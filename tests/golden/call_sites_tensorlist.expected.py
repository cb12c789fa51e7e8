# golden-run: pipe=inspect_pipe args=(str(DATA / "images"),) iterations=12
import numpy as np
import nvidia.dali.experimental.dynamic as ndd


def inspect_pipe(root, *, batch_size=4, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=root)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs)
                images = ndd.resize(images, resize_x=8, resize_y=8)
                outputs_2 = images, labels
            yield outputs_2


def show(root):
    pipe = inspect_pipe(root)
    outputs = next(pipe)
    images, labels = outputs
    n = images.batch_size
    first = np.array(images.select(0))
    second = images.select(1)
    shapes = images.shape
    third = list(images.select(2).shape)
    kind = images.dtype.type_id
    host = images.cpu()
    dense = ndd.as_tensor(images)
    label_array = np.array(ndd.as_tensor(labels))
    label_rows = np.asarray(ndd.as_tensor(labels))
    print(n, first.shape, np.asarray(second).shape, shapes, third, kind, np.array(host.select(0)), dense, label_array, label_rows)
    print(np.array(np.array(outputs[1].select(0))))
    return label_array
