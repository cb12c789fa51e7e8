# golden-run: pipe=MattingPipeline kwargs={"files": sorted(str(p) for p in (DATA / "images").rglob("*.jpg")), "batch_size": 2, "num_threads": 2, "device_id": None, "size": 32} iterations=4
"""A matting data loader as one project writes it: __init__ keeps `iter(files)` under the
parameter's own name (self.files = iter(FileBatches(files, ...))) and a size derived from a
local under the local's name (self.canvas = canvas + 16): each value becomes a local of its own,
so the operators made from the original `canvas` still read it."""
import numpy as np
from nvidia.dali import fn, ops, types
from nvidia.dali.pipeline import Pipeline


class FileBatches:
    """Batches of encoded images read from a list of files, in order."""

    def __init__(self, files, batch_size):
        self.files = list(files)
        self.batch_size = batch_size

    def __iter__(self):
        for start in range(0, len(self.files) - self.batch_size + 1, self.batch_size):
            chunk = self.files[start:start + self.batch_size]
            yield [np.fromfile(f, dtype=np.uint8) for f in chunk]


class MattingPipeline(Pipeline):
    def __init__(self, files, batch_size, num_threads, device_id, size):
        super().__init__(batch_size, num_threads, device_id)
        canvas = size
        self.files = iter(FileBatches(files, batch_size))
        self.canvas = canvas + 16
        self.decode = ops.decoders.Image(device="cpu", output_type=types.RGB)
        self.resize = ops.Resize(resize_x=canvas, resize_y=canvas)

    def define_graph(self):
        encoded = fn.external_source(source=self.files)
        images = self.resize(self.decode(encoded))
        padded = fn.pad(images, shape=[self.canvas, self.canvas, 3], axes=(0, 1, 2))
        return images, padded
