# golden-run: pipe=HybridValPipe kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "data_dir": str(DATA / "images"), "crop": 24, "size": 32, "dali_cpu": True} iterations=7
# golden-verify: pipe=HybridTrainPipe kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "data_dir": str(DATA / "images"), "crop": 32, "dali_cpu": True} iterations=7
"""An ImageNet training script as many repositories carry it: the decoder (and the device of what
follows it) is chosen in __init__ by `if dali_cpu:` from the command line's --dali_cpu."""
import argparse

import torch
from nvidia.dali.pipeline import Pipeline
import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.plugin.pytorch import DALIClassificationIterator


class HybridTrainPipe(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data_dir, crop, dali_cpu=False):
        super(HybridTrainPipe, self).__init__(batch_size, num_threads, device_id, seed=12)
        self.input = ops.readers.File(file_root=data_dir, random_shuffle=True, pad_last_batch=True)
        if dali_cpu:
            dali_device = "cpu"
            self.decode = ops.decoders.Image(device=dali_device, output_type=types.RGB)
        else:
            dali_device = "gpu"
            # This padding sets the size of the internal nvJPEG buffers to be able to handle all
            # images from full-sized ImageNet without additional reallocations
            self.decode = ops.decoders.Image(device="mixed", output_type=types.RGB,
                                             device_memory_padding=211025920,
                                             host_memory_padding=140544512)
        self.res = ops.RandomResizedCrop(device=dali_device, size=[crop, crop],
                                         random_aspect_ratio=[0.75, 4.0 / 3.0],
                                         random_area=[0.08, 1.0], num_attempts=100)
        self.cmnp = ops.CropMirrorNormalize(device="gpu",
                                            dtype=types.FLOAT,
                                            output_layout=types.NCHW,
                                            crop=(crop, crop),
                                            mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                            std=[0.229 * 255, 0.224 * 255, 0.225 * 255])
        self.coin = ops.random.CoinFlip(probability=0.5)
        print('DALI "{0}" variant'.format(dali_device))

    def define_graph(self):
        rng = self.coin()
        self.jpegs, self.labels = self.input(name="Reader")
        images = self.decode(self.jpegs)
        images = self.res(images)
        output = self.cmnp(images.gpu(), mirror=rng)
        return [output, self.labels]


class HybridValPipe(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data_dir, crop, size, dali_cpu=False):
        super(HybridValPipe, self).__init__(batch_size, num_threads, device_id, seed=12)
        self.input = ops.readers.File(file_root=data_dir, random_shuffle=False, pad_last_batch=True)
        if dali_cpu:
            self.decode = ops.decoders.Image(device="cpu", output_type=types.RGB)
            self.res = ops.Resize(device="cpu", resize_shorter=size, interp_type=types.INTERP_TRIANGULAR)
        else:
            self.decode = ops.decoders.Image(device="mixed", output_type=types.RGB)
            self.res = ops.Resize(device="gpu", resize_shorter=size, interp_type=types.INTERP_TRIANGULAR)
        self.cmnp = ops.CropMirrorNormalize(device="gpu",
                                            dtype=types.FLOAT,
                                            output_layout=types.NCHW,
                                            crop=(crop, crop),
                                            mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                            std=[0.229 * 255, 0.224 * 255, 0.225 * 255])

    def define_graph(self):
        self.jpegs, self.labels = self.input(name="Reader")
        images = self.decode(self.jpegs)
        images = self.res(images)
        output = self.cmnp(images.gpu())
        return [output, self.labels]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("data")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--dali_cpu", action="store_true")
    args = parser.parse_args()

    pipe = HybridTrainPipe(batch_size=args.batch_size, num_threads=args.workers, device_id=args.local_rank,
                           data_dir=args.data + "/train", crop=224, dali_cpu=args.dali_cpu)
    pipe.build()
    train_loader = DALIClassificationIterator(pipe, reader_name="Reader")

    pipe = HybridValPipe(batch_size=args.batch_size, num_threads=args.workers, device_id=args.local_rank,
                         data_dir=args.data + "/val", crop=224, size=256, dali_cpu=args.dali_cpu)
    pipe.build()
    val_loader = DALIClassificationIterator(pipe, reader_name="Reader")

    for epoch in range(2):
        for i, data in enumerate(train_loader):
            images = data[0]["data"]
            target = data[0]["label"].squeeze().cuda().long()
        with torch.no_grad():
            for i, data in enumerate(val_loader):
                images = data[0]["data"]
                target = data[0]["label"].squeeze().cuda().long()


if __name__ == "__main__":
    main()
