# golden-run: pipe=ValPipe args=(str(DATA / "images"),) kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "crop": 48, "shard_id": 0, "num_shards": 1} iterations=8
# golden-verify: pipe=TrainPipe args=(str(DATA / "images"),) kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "crop": 48, "shard_id": 1, "num_shards": 2} iterations=6
"""An ImageNet training script: a training and a validation Pipeline subclass whose readers differ
only in shuffling, one chosen by a command-line flag through a variable, wrapped in DALI's
PyTorch iterator with the reader's epoch."""
import argparse

import nvidia.dali.ops as ops
import nvidia.dali.types as types
import torch
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


class TrainPipe(Pipeline):
    def __init__(self, data_dir, batch_size, num_threads, device_id, crop, shard_id=0, num_shards=1):
        super().__init__(batch_size, num_threads, device_id, seed=12)
        self.input = ops.readers.File(file_root=data_dir, shard_id=shard_id, num_shards=num_shards,
                                      random_shuffle=True, pad_last_batch=True)
        self.decode = ops.decoders.ImageRandomCrop(device="mixed", output_type=types.RGB)
        self.res = ops.Resize(device="gpu", resize_x=crop, resize_y=crop)
        self.cmnp = ops.CropMirrorNormalize(device="gpu", dtype=types.FLOAT, output_layout="CHW",
                                            mean=MEAN, std=STD)
        self.coin = ops.random.CoinFlip(probability=0.5)

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        images = self.res(self.decode(jpegs))
        return [self.cmnp(images, mirror=self.coin()), labels.gpu()]


class ValPipe(Pipeline):
    def __init__(self, data_dir, batch_size, num_threads, device_id, crop, shard_id=0, num_shards=1):
        super().__init__(batch_size, num_threads, device_id, seed=12)
        self.input = ops.readers.File(file_root=data_dir, shard_id=shard_id, num_shards=num_shards,
                                      random_shuffle=False, pad_last_batch=True)
        self.decode = ops.decoders.Image(device="mixed", output_type=types.RGB)
        self.res = ops.Resize(device="gpu", resize_x=crop, resize_y=crop)
        self.cmnp = ops.CropMirrorNormalize(device="gpu", dtype=types.FLOAT, output_layout="CHW",
                                            mean=MEAN, std=STD)

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        images = self.res(self.decode(jpegs))
        return [self.cmnp(images), labels.gpu()]


def make_loader(args):
    pipe_class = TrainPipe if args.train else ValPipe
    pipe = pipe_class(args.data, batch_size=args.batch_size, num_threads=args.workers,
                      device_id=args.local_rank, crop=args.crop,
                      shard_id=args.local_rank, num_shards=args.world_size)
    pipe.build()
    return DALIGenericIterator(pipe, ["data", "label"], reader_name="Reader", auto_reset=True,
                               last_batch_policy=LastBatchPolicy.PARTIAL)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("data")
    parser.add_argument("--train", action="store_true")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--crop", type=int, default=224)
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--world-size", type=int, default=1)
    args = parser.parse_args()
    loader = make_loader(args)
    for epoch in range(2):
        for data in loader:
            images, labels = data[0]["data"], data[0]["label"]
            print(epoch, images.shape, torch.flatten(labels)[:4])


if __name__ == "__main__":
    main()
