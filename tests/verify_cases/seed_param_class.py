"""MLCommons 3D U-Net style: the subclass takes `seed` for its reader; the pipeline seed is the base class's."""
import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline


class Base(Pipeline):
    def __init__(self, batch_size, device_id=None):
        super().__init__(batch_size=batch_size, num_threads=1, device_id=device_id, seed=7)


class TrainPipe(Base):
    def __init__(self, batch_size, root, seed=0):
        super().__init__(batch_size=batch_size)
        self.input = ops.readers.File(file_root=root, random_shuffle=True, seed=seed)
        self.decode = ops.decoders.Image(output_type=types.RGB)
        self.crop = ops.RandomResizedCrop(size=16)
        self.flip = ops.random.CoinFlip()

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        return self.crop(self.decode(jpegs)), labels, self.flip()
