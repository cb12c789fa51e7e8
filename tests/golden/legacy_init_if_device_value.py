# golden-verify: pipe=HybridTrainPipe kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "data_dir": str(DATA / "images"), "crop": 24, "dali_cpu": True} iterations=7
# golden-verify: pipe=HybridTrainPipe kwargs={"batch_size": 4, "num_threads": 2, "device_id": 0, "data_dir": str(DATA / "images"), "crop": 24, "dali_cpu": False, "fp16": True} iterations=7 device=gpu
"""A training loader that keeps the chosen device on self (self.dali_device) and finishes on the
CPU with a random flip, on the GPU with CropMirrorNormalize: define_graph tests
`self.dali_device == "gpu"`, which each branch of __init__'s `if dali_cpu:` sets to a literal."""
import argparse

from nvidia.dali.pipeline import Pipeline
import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.plugin.pytorch import DALIClassificationIterator


class HybridTrainPipe(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data_dir, crop, dali_cpu=False, fp16=False):
        super(HybridTrainPipe, self).__init__(batch_size, num_threads, device_id, seed=7)
        self.input = ops.FileReader(file_root=data_dir, random_shuffle=True)

        # Let user decide which pipeline works best with the chosen model
        if dali_cpu:
            decode_device = "cpu"
            self.dali_device = "cpu"
            self.flip = ops.Flip(device=self.dali_device)
        else:
            decode_device = "mixed"
            self.dali_device = "gpu"

            output_dtype = types.FLOAT
            if self.dali_device == "gpu" and fp16:
                output_dtype = types.FLOAT16

            self.cmn = ops.CropMirrorNormalize(device="gpu", dtype=output_dtype, output_layout=types.NCHW,
                                               mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                               std=[0.229 * 255, 0.224 * 255, 0.225 * 255])

        self.decode = ops.ImageDecoderRandomCrop(device=decode_device, output_type=types.RGB,
                                                 random_aspect_ratio=[0.8, 1.25], random_area=[0.1, 1.0])
        self.res = ops.Resize(device=self.dali_device, resize_x=crop, resize_y=crop,
                              interp_type=types.INTERP_TRIANGULAR)
        self.coin = ops.CoinFlip(probability=0.5)
        print('DALI "{0}" variant'.format(self.dali_device))

    def define_graph(self):
        rng = self.coin()
        self.jpegs, self.labels = self.input(name="Reader")
        images = self.decode(self.jpegs)
        images = self.res(images)
        if self.dali_device == "gpu":
            output = self.cmn(images, mirror=rng)
        else:
            # the CPU variant normalizes with torch
            output = self.flip(images, horizontal=rng)
        return [output, self.labels]


def get_loader(args):
    pipe = HybridTrainPipe(batch_size=args.batch_size, num_threads=args.workers, device_id=args.local_rank,
                           data_dir=args.data, crop=224, dali_cpu=args.dali_cpu, fp16=args.fp16)
    pipe.build()
    return DALIClassificationIterator(pipe, reader_name="Reader")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("data")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--dali_cpu", action="store_true")
    parser.add_argument("--fp16", action="store_true")
    for data in get_loader(parser.parse_args()):
        images, target = data[0]["data"], data[0]["label"]
