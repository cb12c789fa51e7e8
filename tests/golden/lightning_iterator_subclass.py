# golden-verify: pipe=mnist_pipeline args=("cpu",) kwargs={"batch_size": 3, "data_path": str(DATA / "caffe2_lmdb")} iterations=6
"""PyTorch Lightning training with DALI, as DALI's Lightning example writes it: the module makes its
pipeline in prepare_data() and wraps DALI's iterator in a subclass that hands Lightning a list
instead of DALI's list of dicts."""
import torch
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import pipeline_def
from nvidia.dali.plugin.pytorch import DALIClassificationIterator, LastBatchPolicy
from pytorch_lightning import LightningModule

BATCH_SIZE = 64


@pipeline_def
def mnist_pipeline(device, shard_id=0, num_shards=1, data_path="db/MNIST/training/"):
    jpegs, labels = fn.readers.caffe2(path=data_path, shard_id=shard_id, num_shards=num_shards, random_shuffle=True, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed" if device == "gpu" else "cpu", output_type=types.GRAY)
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, std=[0.3081 * 255], mean=[0.1307 * 255], output_layout="CHW")
    if device == "gpu":
        labels = labels.gpu()
    # PyTorch expects labels as INT64
    labels = fn.cast(labels, dtype=types.INT64)
    return images, labels


class MNISTClassifier(LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(28 * 28, 10)

    def forward(self, x):
        return torch.log_softmax(self.layer(x.view(x.size(0), -1)), dim=1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.nll_loss(self(x), y)

    def prepare_data(self):
        device_id = self.local_rank
        shard_id = self.global_rank
        num_shards = self.trainer.world_size
        pipe = mnist_pipeline(batch_size=BATCH_SIZE, device="gpu", device_id=device_id, shard_id=shard_id, num_shards=num_shards, num_threads=8)

        class LightningWrapper(DALIClassificationIterator):
            def __init__(self, *kargs, **kvargs):
                super().__init__(*kargs, **kvargs)

            def __next__(self):
                out = super().__next__()
                # DDP: one pipeline per process; Lightning wants a list, the labels squeezed
                out = out[0]
                return [out[k] if k != "label" else torch.squeeze(out[k]) for k in self.output_map]

        self.train_loader = LightningWrapper(pipe, reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL, auto_reset=True)

    def train_dataloader(self):
        return self.train_loader
