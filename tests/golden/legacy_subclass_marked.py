"""A Pipeline subclass extended in a way dali-migrate does not follow (arguments passed on with
*args/**kwargs): the subclass stays a class, and so does its base."""
import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline


class BasePipe(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data_dir):
        super().__init__(batch_size, num_threads, device_id, seed=12)
        self.input = ops.readers.File(file_root=data_dir)
        self.decode = ops.decoders.Image(device="mixed", output_type=types.RGB)

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        return self.decode(jpegs), labels


class CropPipe(BasePipe):
    def __init__(self, *args, crop=224, **kwargs):
        super().__init__(*args, **kwargs)
        self.crop = ops.Crop(device="gpu", crop=(crop, crop))

    def define_graph(self):
        images, labels = super().define_graph()
        return self.crop(images), labels


pipe = CropPipe(8, 2, 0, "data/images", crop=128)
pipe.build()
images, labels = pipe.run()
