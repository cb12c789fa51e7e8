"""An operator object made under a condition expression: the class stays, and the marker says why."""
from nvidia.dali.pipeline import Pipeline
import nvidia.dali.ops as ops


# dali-migrate: [legacy-pipeline] not converted: ops.Resize(...) is made where dali-migrate cannot follow the operator object (inside an expression such as `ops.X(...) if flag else None`, a container or a call): convert this pipeline by hand
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
