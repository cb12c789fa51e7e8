# golden-run: pipe=external_input_pipe args=(str(DATA),) iterations=7
"""One external source with several outputs (num_outputs=), as DALI's external-input example writes it."""
import os

import numpy as np
from nvidia.dali import fn, pipeline_def, types

BATCH_SIZE = 4


class ExternalInputIterator(object):
    def __init__(self, batch_size, data_root):
        self.data_root = data_root
        self.batch_size = batch_size
        with open(os.path.join(data_root, "images_list.txt"), "r") as f:
            self.files = [line.rstrip() for line in f if line != ""]

    def __iter__(self):
        self.i = 0
        self.n = len(self.files)
        return self

    def __next__(self):
        batch = []
        labels = []
        for _ in range(self.batch_size):
            jpeg_filename, label = self.files[self.i].split(" ")
            with open(os.path.join(self.data_root, jpeg_filename), "rb") as f:
                batch.append(np.frombuffer(f.read(), dtype=np.uint8))
            labels.append(np.array([int(label)], dtype=np.uint8))
            self.i = (self.i + 1) % self.n
        return (batch, labels)


def sample_with_label(sample_info):
    image = np.full((3, 4, 3), sample_info.idx_in_epoch, dtype=np.uint8)
    return image, np.array([sample_info.idx_in_epoch % 3], dtype=np.int32)


@pipeline_def(batch_size=BATCH_SIZE, num_threads=2, device_id=0)
def external_input_pipe(data_root):
    jpegs, labels = fn.external_source(source=ExternalInputIterator(BATCH_SIZE, data_root), num_outputs=2, dtype=types.UINT8)
    decode = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    enhance = fn.brightness_contrast(decode, contrast=2)
    return enhance, labels


@pipeline_def(batch_size=3, num_threads=1, device_id=None)
def sample_pairs():
    image, label = fn.external_source(source=sample_with_label, batch=False, num_outputs=2, layout=["HWC"])
    return fn.flip(image, vertical=1), label


if __name__ == "__main__":
    pipe = external_input_pipe("data")
    pipe.build()
    images, labels = pipe.run()
