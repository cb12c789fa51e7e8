"""DALI's external-source example as projects copy it (Optimize4Training's CIFAR loader, Lightning's
image classifier): the Pipeline subclass gets its source through __init__, and the function that
makes the pipeline makes the source, an iterator class of the file, just before."""
import numpy as np
import nvidia.dali.ops as ops
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin.pytorch import DALIClassificationIterator


class ExternalInputIterator:
    def __init__(self, batch_size):
        self.batch_size = batch_size

    def __iter__(self):
        self.i = 0
        return self

    def __next__(self):
        if self.i >= 4:
            raise StopIteration
        images = [np.full((4, 4, 3), self.i * 10 + k, dtype=np.uint8) for k in range(self.batch_size)]
        labels = [np.array([k], dtype=np.int32) for k in range(self.batch_size)]
        self.i += 1
        return images, labels


class ExternalSourcePipeline(Pipeline):
    def __init__(self, external_iterator, batch_size, num_threads, device_id):
        super().__init__(batch_size=batch_size, num_threads=num_threads, device_id=device_id, seed=12)
        self.source = ops.ExternalSource(source=external_iterator, num_outputs=2)
        self.flip = ops.Flip(horizontal=1)

    def define_graph(self):
        images, labels = self.source()
        return self.flip(images), labels


def make_loader(batch_size, n):
    eii = ExternalInputIterator(batch_size)
    pipe = ExternalSourcePipeline(external_iterator=eii, batch_size=batch_size, num_threads=2, device_id=0)
    pipe.build()
    return DALIClassificationIterator(pipe, size=n, auto_reset=True)
