"""iter_setup() forms that are left to a person: a feed that depends on a condition, and a
module-level iterator that other code draws from too."""
import numpy as np
import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline


class RandomBatches:
    def __init__(self, batch_size):
        self.batch_size = batch_size

    def __iter__(self):
        return self

    def __next__(self):
        images = [np.random.randint(0, 255, (8, 8, 3), dtype=np.uint8) for _ in range(self.batch_size)]
        labels = [np.random.randint(0, 10, (1,), dtype=np.int32) for _ in range(self.batch_size)]
        return images, labels


# dali-migrate: [legacy-pipeline] not converted: iter_setup calls feed_input under a condition or in a loop, or does more after it: only an iter_setup that ends by feeding every input once is converted; convert by hand
class LabelledPipeline(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, with_labels=True):
        super().__init__(batch_size, num_threads, device_id)
        self.input = ops.ExternalSource()
        self.input_label = ops.ExternalSource()
        self.with_labels = with_labels
        self.iterator = iter(RandomBatches(batch_size))

    def define_graph(self):
        self.images = self.input()
        self.labels = self.input_label()
        return self.images, self.labels

    def iter_setup(self):
        images, labels = next(self.iterator)
        self.feed_input(self.images, images, layout="HWC")
        if self.with_labels:
            self.feed_input(self.labels, labels)


batches = iter(RandomBatches(4))


# dali-migrate: [legacy-pipeline] not converted: iter_setup draws from the module-level batches, which other code of the file uses too: a pipeline draws prefetch_queue_depth batches ahead, the converted loop one per next(), so that code would see another order; give the pipeline an iterator of its own, or convert by hand
class SharedIteratorPipeline(Pipeline):
    def __init__(self, batch_size, num_threads, device_id):
        super().__init__(batch_size, num_threads, device_id)
        self.input = ops.ExternalSource()

    def define_graph(self):
        self.images = self.input()
        return self.images

    def iter_setup(self):
        images, _ = next(batches)
        self.feed_input(self.images, images, layout="HWC")


first_images, first_labels = next(batches)
pipe = SharedIteratorPipeline(4, 2, 0)
pipe.build()
(images,) = pipe.run()
