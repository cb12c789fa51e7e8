# golden-run: pipe=external_input_pipe args=(str(DATA),) iterations=7
"""One external source with several outputs (num_outputs=), as DALI's external-input example writes it."""
import os

import numpy as np
import itertools
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


def external_input_pipe(data_root, *, batch_size=BATCH_SIZE, num_threads=2, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    source_2 = ExternalInputIterator(BATCH_SIZE, data_root)

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        for source_data in source_2:
            with ctx:
                jpegs, labels = external_source_batch(source_data[0], types.UINT8, copy=True), external_source_batch(source_data[1], types.UINT8, copy=True)
                decode = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                enhance = ndd.brightness_contrast(decode, contrast=2)
                outputs = enhance, labels
            yield outputs

    return batches()


def sample_pairs(*, batch_size=3, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    source_2 = sample_with_label
    for source_data in map(lambda i: [source_2(types.SampleInfo(i * batch_size + j, j, i, 0)) for j in range(batch_size)], itertools.count()):
        with ctx:
            image, label = ndd.batch([sample[0] for sample in source_data], layout="HWC"), ndd.batch([sample[1] for sample in source_data])
            outputs = ndd.flip(image, vertical=1), label
        yield outputs


if __name__ == "__main__":
    pipe = external_input_pipe("data")
    images, labels = next(pipe)
