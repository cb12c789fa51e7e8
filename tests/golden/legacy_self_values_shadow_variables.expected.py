# golden-run: pipe=MattingPipeline kwargs={"files": sorted(str(p) for p in (DATA / "images").rglob("*.jpg")), "batch_size": 2, "num_threads": 2, "device_id": None, "size": 32} iterations=4
"""A matting data loader as one project writes it: __init__ keeps `iter(files)` under the
parameter's own name (self.files = iter(FileBatches(files, ...))) and a size derived from a
local under the local's name (self.canvas = canvas + 16): each value becomes a local of its own,
so the operators made from the original `canvas` still read it."""
import numpy as np
from nvidia.dali import types
import nvidia.dali.experimental.dynamic as ndd


class FileBatches:
    """Batches of encoded images read from a list of files, in order."""

    def __init__(self, files, batch_size):
        self.files = list(files)
        self.batch_size = batch_size

    def __iter__(self):
        for start in range(0, len(self.files) - self.batch_size + 1, self.batch_size):
            chunk = self.files[start:start + self.batch_size]
            yield [np.fromfile(f, dtype=np.uint8) for f in chunk]


def MattingPipeline(files, batch_size, num_threads, device_id, size, *, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    canvas = size
    files_2 = iter(FileBatches(files, batch_size))
    canvas_2 = canvas + 16
    source_2 = files_2

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        for source_data in source_2:
            with ctx:
                encoded = ndd.batch(source_data)
                images = ndd.resize(ndd.decoders.image(encoded, device="cpu", output_type=types.RGB), resize_x=canvas, resize_y=canvas)
                padded = ndd.pad(images, shape=[canvas_2, canvas_2, 3], axes=(0, 1, 2))
                outputs = images, padded
            yield outputs

    return batches()
