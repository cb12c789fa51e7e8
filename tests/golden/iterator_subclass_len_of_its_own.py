# golden-verify: pipe=train_pipe args=(str(DATA / "images"),) kwargs=dict(batch_size=4) iterations=6
"""PyTorch Lightning's DALI example: DALI's iterator extended with the __len__ Lightning asks for,
counted from DALI's own _size and _num_gpus and a flag the class keeps for itself."""
import pytorch_lightning as pl
from nvidia.dali import fn, pipeline_def, types
from nvidia.dali.plugin.pytorch import DALIClassificationIterator, LastBatchPolicy


@pipeline_def(num_threads=2, device_id=0, seed=12)
def train_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, resize_x=64, resize_y=64)
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW", mirror=fn.random.coin_flip())
    return images, labels


class DALIClassificationLoader(DALIClassificationIterator):
    """DALI's iterator with a len(): Lightning counts the steps of an epoch with it."""

    def __init__(self, fill_last, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._fill_last_batch = fill_last

    def __len__(self):
        batch_count = self._size // (self._num_gpus * self.batch_size)
        last_batch = 1 if self._fill_last_batch else 0
        return batch_count + last_batch


class ImageDataModule(pl.LightningDataModule):
    def __init__(self, root, batch_size=32):
        super().__init__()
        self.root, self.batch_size = root, batch_size

    def train_dataloader(self):
        pipe = train_pipe(self.root, batch_size=self.batch_size)
        pipe.build()
        size = pipe.epoch_size("Reader")
        return DALIClassificationLoader(True, pipe, size=size, auto_reset=True, last_batch_policy=LastBatchPolicy.FILL)
