"""An operator object made under a condition expression (`ops.X(...) if flag else None`) converts as
the `if` of __init__ it means; one kept in a container cannot be followed: that class stays, and
the marker says why."""
from nvidia.dali.pipeline import Pipeline
import nvidia.dali.ops as ops


class ValPipe(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, resize_shp=None):
        super().__init__(batch_size, num_threads, device_id)
        self.input = ops.FileReader(file_root="images")
        self.decode = ops.ImageDecoder(device="cpu")
        self.resize = ops.Resize(resize_shorter=resize_shp) if resize_shp else None

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        images = self.decode(jpegs)
        if self.resize:
            images = self.resize(images)
        return images, labels


class AugPipe(Pipeline):
    def __init__(self, batch_size, num_threads, device_id):
        super().__init__(batch_size, num_threads, device_id)
        self.input = ops.FileReader(file_root="images")
        self.decode = ops.ImageDecoder(device="cpu")
        self.augs = [ops.Flip(), ops.Rotate(angle=10)]

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        images = self.decode(jpegs)
        for aug in self.augs:
            images = aug(images)
        return images, labels
