"""A loader class whose method builds the pipeline by hand and returns it; another method of the
class builds it and takes batches from it, as training scripts wrap DALI in their own class."""
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import Pipeline


class Loader:
    def __init__(self, root, batch_size, device_id=0):
        self.root, self.batch_size, self.device_id = root, batch_size, device_id

    def make_pipe(self):
        pipe = Pipeline(batch_size=self.batch_size, num_threads=2, device_id=self.device_id)
        with pipe:
            jpegs, labels = fn.readers.file(file_root=self.root, name="Reader")
            images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
            images = fn.resize(images, resize_x=32, resize_y=32)
            pipe.set_outputs(images, labels)
        return pipe

    def first_batch(self):
        pipe = self.make_pipe()
        pipe.build()
        images, labels = pipe.run()
        return images.as_cpu().as_array(), labels.as_array()

    def batches(self, n):
        pipe = self.make_pipe()
        pipe.build()
        for _ in range(n):
            images, labels = pipe.run()
            yield images.as_cpu().as_array(), labels.as_array()


if __name__ == "__main__":
    loader = Loader("/data/imagenet/train", 64)
    images, labels = loader.first_batch()
    print(images.shape, labels[:8].ravel())
