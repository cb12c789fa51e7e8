# golden-run: pipe=pipeline_box iterations=4
"""fn.external_source(source, num_outputs) given by position, as general/conv_perf.ipynb writes it;
several sources in one pipeline are drawn every iteration."""
import numpy as np
import nvidia.dali.fn as fn
from nvidia.dali import pipeline_def

BATCH = 2


def synth_imgs_data():
    k = 0
    while True:
        images = [np.full((4, 5, 3), k + i, dtype=np.uint8) for i in range(BATCH)]
        labels = [np.array([k % 7 + i], dtype=np.int32) for i in range(BATCH)]
        yield images, labels
        k += 1


def offsets():
    for k in range(4):
        yield [np.full((1,), k, dtype=np.float32)] * BATCH, [np.full((1,), -k, dtype=np.float32)] * BATCH


@pipeline_def(batch_size=BATCH, num_threads=4, device_id=None)
def pipeline_box(window_size=3):
    images, labels = fn.external_source(synth_imgs_data, num_outputs=2, layout=["HWC"])
    low, high = fn.external_source(offsets, 2)
    filters = np.full((window_size, window_size), 1.0 / (window_size**2), dtype=np.float32)
    edges = fn.experimental.filter(images, filters)
    return edges, labels, low + high


if __name__ == "__main__":
    pipe = pipeline_box(window_size=3)
    pipe.build()
    edges, labels, offset = pipe.run()
