"""A loader class whose method builds the pipeline by hand and returns it; another method of the
class builds it and takes batches from it, as training scripts wrap DALI in their own class."""
import numpy as np
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


class Loader:
    def __init__(self, root, batch_size, device_id=0):
        self.root, self.batch_size, self.device_id = root, batch_size, device_id

    def make_pipe(self):
        # the self.<name> values the graph reads are taken here, once, as the pipeline read them
        def pipe_batches(self_root=self.root, *, batch_size=self.batch_size, num_threads=2, device_id=self.device_id, seed=None):
            ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
            reader = ndd.readers.File(file_root=self_root)
            while True:
                for jpegs, labels in reader.next_epoch(batch_size=batch_size):
                    with ctx:
                        images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                        images = ndd.resize(images, resize_x=32, resize_y=32)
                        outputs = images, labels
                    yield outputs

        pipe = pipe_batches()
        return pipe

    def first_batch(self):
        pipe = self.make_pipe()
        images, labels = next(pipe)
        return np.array(ndd.as_tensor(images.cpu())), np.array(ndd.as_tensor(labels))

    def batches(self, n):
        pipe = self.make_pipe()
        for _ in range(n):
            images, labels = next(pipe)
            yield np.array(ndd.as_tensor(images.cpu())), np.array(ndd.as_tensor(labels))


if __name__ == "__main__":
    loader = Loader("/data/imagenet/train", 64)
    images, labels = loader.first_batch()
    print(images.shape, labels[:8].ravel())
