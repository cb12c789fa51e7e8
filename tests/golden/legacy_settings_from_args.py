# golden-verify: pipe=TrainPipe kwargs={"args": type("Args", (), {"batch_size": 4, "workers": 2, "local_rank": None, "data": str(DATA / "images"), "size": 24})(), "seed": 5} iterations=7
"""A training script's pipeline class, configured from the parsed command line: the settings come
from attributes of a constructor argument (SSD's coco_pipeline.py does this)."""
import argparse

import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline


class TrainPipe(Pipeline):
    def __init__(self, args, seed):
        super(TrainPipe, self).__init__(
            batch_size=args.batch_size, num_threads=args.workers, device_id=args.local_rank, seed=seed
        )
        self.input = ops.readers.File(file_root=args.data, random_shuffle=True)
        self.decode = ops.decoders.Image(device="mixed", output_type=types.RGB)
        self.resize = ops.RandomResizedCrop(device="gpu", size=args.size)
        self.coin = ops.random.CoinFlip(probability=0.5)
        self.cmn = ops.CropMirrorNormalize(device="gpu", dtype=types.FLOAT, output_layout="CHW")

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        images = self.resize(self.decode(jpegs))
        return self.cmn(images, mirror=self.coin()), labels


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--size", type=int, default=224)
    args = parser.parse_args()
    pipe = TrainPipe(args, seed=42)
    pipe.build()
    for _ in range(10):
        images, labels = pipe.run()
