# golden-verify: pipe=FileReadPipeline kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "num_gpus": 2, "data_dir": str(DATA / "images")} iterations=8
"""DALI's frameworks/pytorch/pytorch-basic_example notebook, as many projects copied it: a Pipeline
subclass, one instance per GPU, one DALIGenericIterator over all of them sized by the first one's
epoch_size()."""
import torch
import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin.pytorch import DALIGenericIterator

N = 2  # number of GPUs
BATCH_SIZE = 128  # batch size per GPU
IMAGE_SIZE = 3


class FileReadPipeline(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, num_gpus, data_dir):
        super(FileReadPipeline, self).__init__(batch_size, num_threads, device_id, seed=12)
        self.input = ops.readers.File(file_root=data_dir, shard_id=device_id, num_shards=num_gpus)
        self.decode = ops.decoders.Image(device="mixed", output_type=types.RGB)
        self.res = ops.Resize(device="gpu", resize_x=IMAGE_SIZE, resize_y=IMAGE_SIZE)

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        images = self.decode(jpegs)
        images = self.res(images)
        return [images, labels]


def main(data_dir):
    pipes = [
        FileReadPipeline(batch_size=BATCH_SIZE, num_threads=2, device_id=device_id, num_gpus=N, data_dir=data_dir)
        for device_id in range(N)
    ]
    pipes[0].build()
    dali_iter = DALIGenericIterator(pipes, ["data", "label"], pipes[0].epoch_size("Reader"))

    for i, data in enumerate(dali_iter):
        if i >= 4:
            break
        # Testing correctness of labels
        for d in data:
            label = d["label"]
            image = d["data"]
            ## labels need to be integers
            assert torch.equal(torch.floor(label), label)
            print(image.shape, label.shape)
