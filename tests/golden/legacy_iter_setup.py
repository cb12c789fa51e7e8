# golden-verify: pipe=ExternalSourcePipeline kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "data_root": str(DATA)} iterations=7
"""Pipeline subclasses fed from Python by iter_setup(), as DALI's external-input examples wrote them."""
import os

import numpy as np
import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline


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

    next = __next__


class ExternalSourcePipeline(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data_root):
        super(ExternalSourcePipeline, self).__init__(batch_size, num_threads, device_id, seed=12)
        self.input = ops.ExternalSource()
        self.input_label = ops.ExternalSource()
        self.decode = ops.decoders.Image(device="mixed", output_type=types.RGB)
        self.cast = ops.Cast(device="gpu", dtype=types.INT32)
        self.iterator = iter(ExternalInputIterator(batch_size, data_root))

    def define_graph(self):
        self.jpegs = self.input()
        self.labels = self.input_label()
        images = self.decode(self.jpegs)
        output = self.cast(images)
        return (output, self.labels)

    def iter_setup(self):
        (images, labels) = self.iterator.next()
        self.feed_input(self.jpegs, images)
        self.feed_input(self.labels, labels)


class FrameIterator:
    """One pass over ``n_frames`` small HWC frames, in batches (the last one may be short)."""

    def __init__(self, batch_size, n_frames):
        self.batch_size = batch_size
        self.n_frames = n_frames

    def __iter__(self):
        self.k = 0
        return self

    def __next__(self):
        if self.k >= self.n_frames:
            raise StopIteration
        first = self.k
        self.k = min(self.k + self.batch_size, self.n_frames)
        return [np.full((2, 3, 3), i, dtype=np.uint8) + np.arange(3, dtype=np.uint8) for i in range(first, self.k)]


class FramePipeline(Pipeline):
    """Flipped frames; the iterator is rewound when it ends, ready for pipe.reset()."""

    def __init__(self, batch_size, num_threads, device_id, n_frames):
        super().__init__(batch_size, num_threads, device_id)
        self.input = ops.ExternalSource()
        self.flip = ops.Flip(horizontal=1)
        self.external_data = FrameIterator(batch_size, n_frames)
        self.iterator = iter(self.external_data)

    def define_graph(self):
        self.frames = self.input()
        return self.flip(self.frames), self.frames

    def iter_setup(self):
        try:
            frames = next(self.iterator)
            while len(frames) < self.max_batch_size:
                frames.append(frames[-1])
            self.feed_input(self.frames, frames, layout="HWC")
        except StopIteration:
            self.iterator = iter(self.external_data)
            raise StopIteration


if __name__ == "__main__":
    pipe = ExternalSourcePipeline(batch_size=8, num_threads=2, device_id=0, data_root="data")
    pipe.build()
    images, labels = pipe.run()
    print(images.as_cpu().at(0).shape)

    frames = FramePipeline(batch_size=4, num_threads=2, device_id=0, n_frames=10)
    frames.build()
    while True:
        try:
            flipped, original = frames.run()
        except StopIteration:
            break
