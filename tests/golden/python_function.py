# golden-run: pipe=python_pipe args=(str(DATA / "images"),) iterations=7
import numpy as np
from nvidia.dali import fn, pipeline_def


def invert(image):
    return 255 - image


@pipeline_def(batch_size=4, num_threads=1, exec_async=False, exec_pipelined=False)
def python_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs)
    images = fn.python_function(images, function=invert)
    return images, labels


pipe = python_pipe("/data")
pipe.build()
images, labels = pipe.run()
print(np.asarray(images.at(0)))
