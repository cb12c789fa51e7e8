# golden-verify: pipe=AugmentPipeline kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "data_dir": str(DATA / "images")} iterations=7
"""A Pipeline subclass that splits its work into methods: __init__ calls one to make the
operators, define_graph calls others (which call each other, with keyword arguments and
defaults), and __len__ / describe() are there for its users."""
import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline


class AugmentPipeline(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data_dir, crop=24, epoch=21):
        super().__init__(batch_size, num_threads, device_id, seed=7)
        self.epoch = epoch
        self.input = ops.readers.File(file_root=data_dir, random_shuffle=True, name="Reader")
        self._make_augmentations(crop)

    def _make_augmentations(self, crop):
        self.decode = ops.decoders.Image(device="mixed", output_type=types.RGB)
        self.resize = ops.Resize(device="gpu", resize_x=32, resize_y=32)
        self.crop = ops.Crop(device="gpu", crop=(crop, crop))
        self.flip = ops.Flip(device="gpu")
        self.coin = ops.random.CoinFlip(probability=0.5)
        self.pos = ops.random.Uniform(range=(0.0, 1.0))

    def random_crop(self, images):
        # where each crop starts: one draw per sample and axis
        images = self.crop(images, crop_pos_x=self.pos(), crop_pos_y=self.pos())
        return images

    def augment(self, images, flip=True):
        images = self.resize(images)
        images = self.random_crop(images)
        if flip:
            images = self.flip(images, horizontal=self.coin())
        return images

    def define_graph(self):
        jpegs, labels = self.input()
        images = self.decode(jpegs)
        # the images as they are, and augmented twice
        plain = self.resize(images)
        first = self.augment(images)
        second = self.augment(images, flip=False)
        return plain, first, second, labels

    def __len__(self):
        return self.epoch

    def describe(self):
        return f"{len(self)} images, cropped"


if __name__ == "__main__":
    pipe = AugmentPipeline(batch_size=8, num_threads=2, device_id=0, data_dir="data/images")
    pipe.build()
    for step in range(3):
        plain, first, second, labels = pipe.run()
