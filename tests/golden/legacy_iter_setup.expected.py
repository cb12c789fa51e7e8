# golden-verify: pipe=ExternalSourcePipeline kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "data_root": str(DATA)} iterations=7
"""Pipeline subclasses fed from Python by iter_setup(), as DALI's external-input examples wrote them."""
import os

import numpy as np
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


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


def ExternalSourcePipeline(batch_size, num_threads, device_id, data_root, *, seed=12):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    iterator = iter(ExternalInputIterator(batch_size, data_root))

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        while True:
            try:
                (images_2, labels_2) = iterator.next()
            except StopIteration:
                return
            with ctx:
                jpegs = ndd.batch(images_2)
                labels = ndd.batch(labels_2)
                images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                output = ndd.cast(images, device="gpu", dtype=types.INT32)
                outputs = (output, labels)
            yield outputs

    return batches()


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


def FramePipeline(batch_size, num_threads, device_id, n_frames, *, seed=None):
    """Flipped frames; the iterator is rewound when it ends, ready for pipe.reset()."""
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    external_data = FrameIterator(batch_size, n_frames)
    iterator = iter(external_data)

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        nonlocal iterator
        while True:
            try:
                try:
                    frames_2 = next(iterator)
                    while len(frames_2) < batch_size:
                        frames_2.append(frames_2[-1])
                except StopIteration:
                    iterator = iter(external_data)
                    raise StopIteration
            except StopIteration:
                return
            with ctx:
                frames = ndd.batch(frames_2, layout="HWC")
                outputs = ndd.flip(frames, horizontal=1), frames
            yield outputs

    return batches()


if __name__ == "__main__":
    pipe = ExternalSourcePipeline(batch_size=8, num_threads=2, device_id=0, data_root="data")
    images, labels = next(pipe)
    print(np.array(images.cpu().select(0)).shape)

    frames = FramePipeline(batch_size=4, num_threads=2, device_id=0, n_frames=10)
    while True:
        try:
            flipped, original = next(frames)
        except StopIteration:
            break
