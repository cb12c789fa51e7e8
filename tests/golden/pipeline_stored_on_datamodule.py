"""A PyTorch Lightning DataModule that makes its pipelines in setup(), keeps them on self and
hands each to a DALI iterator, as DALI's frameworks/pytorch examples do."""
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import pipeline_def
from nvidia.dali.plugin.pytorch import DALIClassificationIterator, LastBatchPolicy
from pytorch_lightning import LightningDataModule

BATCH_SIZE = 64


@pipeline_def
def image_pipeline(root, shard_id=0, num_shards=1):
    jpegs, labels = fn.readers.file(file_root=root, shard_id=shard_id, num_shards=num_shards, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, resize_x=32, resize_y=32)
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW")
    return images, labels.gpu()


class ImageDataModule(LightningDataModule):
    def __init__(self, train_root, val_root, batch_size=BATCH_SIZE, device_id=0):
        super().__init__()
        self.train_root, self.val_root = train_root, val_root
        self.batch_size, self.device_id = batch_size, device_id

    def setup(self, stage=None):
        self.train_pipe = image_pipeline(self.train_root, batch_size=self.batch_size, num_threads=4, device_id=self.device_id)
        self.val_pipe = image_pipeline(self.val_root, batch_size=self.batch_size, num_threads=4, device_id=self.device_id)
        self.train_pipe.build()
        self.val_pipe.build()
        self.train_loader = DALIClassificationIterator(self.train_pipe, reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL, auto_reset=True)
        self.val_loader = DALIClassificationIterator(self.val_pipe, reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL, auto_reset=True)

    def train_dataloader(self):
        return self.train_loader

    def val_dataloader(self):
        return self.val_loader
