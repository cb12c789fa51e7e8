"""Random operators chosen by a Python flag, beside another operator of the same kind: a branch the
pipeline does not take creates no operator and takes no seed, while the converted code keeps both
branches' calls. Used by tests/test_verify_branches.py."""

import nvidia.dali.fn as fn
import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali import pipeline_def
from nvidia.dali.pipeline import Pipeline


class TrainPipe(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data_dir, dali_cpu=False):
        super().__init__(batch_size, num_threads, device_id, seed=12)
        self.input = ops.readers.File(file_root=data_dir, random_shuffle=True)
        if dali_cpu:
            self.decode = ops.decoders.Image(device="cpu", output_type=types.RGB)
            self.coin = ops.random.CoinFlip(probability=0.2)
        else:
            self.decode = ops.decoders.Image(device="mixed", output_type=types.RGB)
            self.coin = ops.CoinFlip(probability=0.7)
        self.mirror = ops.random.CoinFlip(probability=0.5)
        self.cmnp = ops.CropMirrorNormalize(device="gpu", crop=(16, 16), dtype=types.FLOAT)

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        images = self.decode(jpegs)
        flip = self.coin()
        images = self.cmnp(images.gpu(), mirror=self.mirror())
        return images, labels, flip


@pipeline_def(batch_size=4, num_threads=2, device_id=0, seed=3)
def augment(root, use_aug=False):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True)
    images = fn.decoders.image(jpegs, device="mixed")
    if use_aug:
        images = fn.rotate(images, angle=fn.random.uniform(range=[-10.0, 10.0]))
    scale = fn.random.uniform(range=[0.5, 1.5])
    images = fn.resize(images, resize_x=scale * 24, resize_y=24)
    return images, labels
