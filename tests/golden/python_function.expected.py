# golden-run: pipe=python_pipe args=(str(DATA / "images"),) iterations=7
import numpy as np
import nvidia.dali.experimental.dynamic as ndd


def invert(image):
    return 255 - image


def python_pipe(root, *, batch_size=4, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=root)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs)
                images = ndd.as_batch([np.asarray(invert(np.asarray(sample)), order="C") for sample in images])
                outputs = images, labels
            yield outputs


pipe = python_pipe("/data")
images, labels = next(pipe)
print(np.asarray(np.array(images.select(0))))
