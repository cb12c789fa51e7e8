"""DALI's external-input example as its documentation writes it: the source object is made at
module level and the graph is built with `with pipe:`. Nothing else in the file reads the object
and the pipeline is made once, so nothing sees when it draws from it: it converts."""
import os

import numpy as np
import nvidia.dali.types as types
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


batch_size = 16


class ExternalInputIterator(object):
    def __init__(self, batch_size):
        self.images_dir = "data/images/"
        self.batch_size = batch_size
        with open(self.images_dir + "file_list.txt", "r") as f:
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
            f = open(os.path.join(self.images_dir, jpeg_filename), "rb")
            batch.append(np.frombuffer(f.read(), dtype=np.uint8))
            labels.append(np.array([label], dtype=np.uint8))
            self.i = (self.i + 1) % self.n
        return (batch, labels)


eii = ExternalInputIterator(batch_size)

def pipe_batches(*, batch_size=batch_size, num_threads=2, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    source_2 = eii
    for source_data in source_2:
        with ctx:
            jpegs, labels = external_source_batch(source_data[0], types.UINT8, copy=True), external_source_batch(source_data[1], types.UINT8, copy=True)
            decode = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
            enhance = ndd.brightness_contrast(decode, contrast=2)
            outputs = enhance, labels
        yield outputs

pipe = pipe_batches()
pipe_out = next(pipe)
