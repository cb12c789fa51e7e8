# golden-verify: pipe=TrainPipe kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "data_dir": str(DATA / "images"), "crop": 24, "dali_cpu": False} iterations=7
# golden-verify: pipe=TrainPipe kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "data_dir": str(DATA / "images"), "crop": 24, "dali_cpu": True} iterations=7
"""A training pipeline whose --dali_cpu switch picks different random operators: the GPU branch
decodes with a fused random crop and adds a brightness jitter that define_graph applies only on the GPU
(under its own `if` on the same flag), the CPU branch decodes and crops separately."""
import argparse

from nvidia.dali.pipeline import Pipeline
import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.plugin.pytorch import DALIClassificationIterator, LastBatchPolicy


class TrainPipe(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data_dir, crop, dali_cpu=False):
        super().__init__(batch_size, num_threads, device_id, seed=42)
        self.dali_cpu = dali_cpu
        self.input = ops.readers.File(file_root=data_dir, random_shuffle=True, name="Reader")
        if not dali_cpu:
            self.decode = ops.decoders.ImageRandomCrop(device="mixed", output_type=types.RGB,
                                                       random_area=[0.1, 1.0], num_attempts=100)
            self.resize = ops.Resize(device="gpu", resize_x=crop, resize_y=crop)
            self.brightness = ops.BrightnessContrast(device="gpu")
            self.jitter = ops.random.Uniform(range=[0.8, 1.2])
        else:
            self.decode = ops.decoders.Image(device="cpu", output_type=types.RGB)
            self.resize = ops.RandomResizedCrop(device="cpu", size=[crop, crop], random_area=[0.1, 1.0])
        self.cmnp = ops.CropMirrorNormalize(device="gpu", dtype=types.FLOAT, output_layout="CHW",
                                            mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                            std=[0.229 * 255, 0.224 * 255, 0.225 * 255])
        self.coin = ops.random.CoinFlip(probability=0.5)

    def define_graph(self):
        jpegs, labels = self.input()
        images = self.decode(jpegs)
        images = self.resize(images)
        if not self.dali_cpu:
            images = self.brightness(images, brightness=self.jitter())
        output = self.cmnp(images.gpu(), mirror=self.coin())
        return [output, labels.gpu()]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("data")
    parser.add_argument("-b", "--batch-size", type=int, default=128)
    parser.add_argument("-j", "--workers", type=int, default=4)
    parser.add_argument("--dali_cpu", action="store_true", help="run decoding and augmentation on the CPU")
    args = parser.parse_args()

    pipe = TrainPipe(args.batch_size, args.workers, 0, args.data, 224, dali_cpu=args.dali_cpu)
    pipe.build()
    loader = DALIClassificationIterator(pipe, reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL)
    for epoch in range(3):
        for data in loader:
            images, target = data[0]["data"], data[0]["label"].squeeze(-1).long()
        loader.reset()


if __name__ == "__main__":
    main()
