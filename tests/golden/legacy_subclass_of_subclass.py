# golden-verify: pipe=FlipPipe kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "data_dir": str(DATA / "images")} iterations=7
"""Pipeline subclasses that extend another one of the file: one adds a step after the base graph,
one replaces the graph, the base itself is used too."""
import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline


class HybridPipe(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data_dir, size=64):
        super(HybridPipe, self).__init__(batch_size, num_threads, device_id, seed=12)
        self.input = ops.readers.File(file_root=data_dir)
        self.decode = ops.decoders.Image(device="mixed", output_type=types.RGB)
        self.res = ops.Resize(device="gpu", resize_x=size, resize_y=size)

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        images = self.decode(jpegs)
        images = self.res(images)
        return images, labels


class FlipPipe(HybridPipe):
    """The same images, smaller and mirrored."""

    def __init__(self, batch_size, num_threads, device_id, data_dir):
        super(FlipPipe, self).__init__(batch_size, num_threads, device_id, data_dir, size=32)
        self.flip = ops.Flip(device="gpu", horizontal=1)

    def define_graph(self):
        images, labels = super().define_graph()
        return self.flip(images), labels


class FullSizePipe(HybridPipe):
    """Decoded images at their own size."""

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        return self.decode(jpegs), labels


if __name__ == "__main__":
    train = FlipPipe(batch_size=8, num_threads=2, device_id=0, data_dir="data/images")
    train.build()
    val = HybridPipe(8, 2, 0, "data/images")
    val.build()
    full = FullSizePipe(8, 2, 0, "data/images", size=128)
    full.build()
    for step in range(3):
        images, labels = train.run()
        val_images, val_labels = val.run()
        full_images, full_labels = full.run()
