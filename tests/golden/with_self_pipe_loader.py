"""A loader class that keeps its pipeline in `self.pipe`, made with `with self.pipe:` in __init__
and ended with `self.pipe.set_outputs(...)`, as MLPerf's SSD and NeMo's audio loaders write it;
DALI's PyTorch iterator runs it and the class hands out (images, targets) pairs."""
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy


class DaliDataIterator:
    def __init__(self, data_path, batch_size, num_threads, shard_id=0, num_shards=1,
                 is_training=True, image_size=(48, 32), device_id=0):
        self.batch_size = batch_size
        self.image_size = image_size

        self.pipe = Pipeline(batch_size=self.batch_size,
                             num_threads=num_threads,
                             seed=42,
                             device_id=device_id)
        with self.pipe:
            jpegs, labels = fn.readers.file(
                name="Reader",
                file_root=data_path,
                shard_id=shard_id,
                num_shards=num_shards,
                stick_to_shard=not is_training,
                pad_last_batch=not is_training)
            shapes = fn.peek_image_shape(jpegs)
            images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
            images = fn.resize(images, resize_x=self.image_size[0], resize_y=self.image_size[1])
            images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                              mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                              std=[0.229 * 255, 0.224 * 255, 0.225 * 255])
            self.pipe.set_outputs(images, shapes, labels.gpu())
        self.pipe.build()

        self.dali_iter = DALIGenericIterator(pipelines=[self.pipe],
                                             reader_name="Reader",
                                             output_map=["images", "images_shape", "labels"],
                                             auto_reset=True,
                                             last_batch_policy=LastBatchPolicy.PARTIAL)

    def __len__(self):
        return len(self.dali_iter)

    def __iter__(self):
        for obj in self.dali_iter:
            obj = obj[0]
            targets = {"labels": obj["labels"].squeeze(-1), "original_image_size": obj["images_shape"]}
            yield obj["images"], targets
