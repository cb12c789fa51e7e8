import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline


class ImagePipeline(Pipeline):
    def __init__(self, data_dir, batch_size, num_threads, device_id, shard_id=0, num_shards=1):
        super(ImagePipeline, self).__init__(batch_size, num_threads, device_id, seed=12)
        self.input = ops.readers.File(
            file_root=data_dir,
            shard_id=shard_id,
            num_shards=num_shards,
            pad_last_batch=True,
            name="Reader")
        self.decode = ops.decoders.Image(device="mixed", output_type=types.RGB)
        self.resize = ops.Resize(device="gpu", resize_x=32, resize_y=32)

    def define_graph(self):
        jpegs, labels = self.input()
        images = self.decode(jpegs)
        images = self.resize(images)
        return images, labels.gpu()
