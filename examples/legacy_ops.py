"""A legacy Pipeline subclass (ops members, define_graph): dali-migrate turns it into a generator function with the class's constructor signature."""

import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline


class HybridPipe(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data_dir):
        super().__init__(batch_size, num_threads, device_id, seed=12)
        self.input = ops.readers.File(file_root=data_dir, random_shuffle=True)
        self.decode = ops.decoders.Image(device="mixed", output_type=types.RGB)

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        images = self.decode(jpegs)
        return images, labels
