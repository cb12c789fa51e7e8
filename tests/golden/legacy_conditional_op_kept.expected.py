"""An operator object made under a condition expression (`ops.X(...) if flag else None`) converts as
the `if` of __init__ it means; one kept in a container cannot be followed: that class stays, and
the marker says why."""
from nvidia.dali.pipeline import Pipeline
import nvidia.dali.ops as ops
import nvidia.dali.experimental.dynamic as ndd


def ValPipe(batch_size, num_threads, device_id, resize_shp=None, *, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root="images")
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="cpu")
                if resize_shp:
                    images = ndd.resize(images, resize_shorter=resize_shp)
                outputs = images, labels
            yield outputs


# dali-migrate: [legacy-pipeline] not converted: ops.Flip(...) is made where dali-migrate cannot follow the operator object (inside an expression such as `flag and ops.X(...)`, a container or a call): convert this pipeline by hand
# dali-migrate: [legacy-pipeline] not converted: ops.Rotate(...) is made where dali-migrate cannot follow the operator object (inside an expression such as `flag and ops.X(...)`, a container or a call): convert this pipeline by hand
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
