# golden-run: pipe=HybridValPipe args=(str(DATA / "images"), 4) kwargs={"device_id": None, "crop": 48, "resize_shorter": 64, "num_threads": 2, "random_shuffle": False} iterations=8
# golden-verify: pipe=HybridTrainPipe args=(str(DATA / "images"), 4) kwargs={"device_id": None, "crop": 48, "resize_shorter": 64, "num_threads": 2, "seed": 7, "shard_id": 1, "num_shards": 2} iterations=6
"""A Paddle ResNet-50 loader as NVIDIA's DeepLearningExamples write it: a base Pipeline subclass
owns the sharded reader and calls a hook its training and validation subclasses fill in; the
loader picks the subclass through a variable (None first, then one per mode) and gives the
pipeline it makes to Paddle's DALIGenericIterator."""
import os

import paddle
import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin.paddle import DALIGenericIterator

TRAIN, EVAL = "train", "eval"


class HybridPipeBase(Pipeline):
    def __init__(self,
                 file_root,
                 batch_size,
                 device_id,
                 crop,
                 resize_shorter=256,
                 num_threads=4,
                 seed=42,
                 shard_id=0,
                 num_shards=1,
                 random_shuffle=True,
                 dont_use_mmap=True):
        super().__init__(batch_size, num_threads, device_id, seed=seed)

        self.input = ops.readers.File(
            file_root=file_root,
            shard_id=shard_id,
            num_shards=num_shards,
            random_shuffle=random_shuffle,
            dont_use_mmap=dont_use_mmap)

        self.build_ops(crop, resize_shorter)

    def build_ops(self, crop, resize_shorter):
        pass


class HybridTrainPipe(HybridPipeBase):
    def build_ops(self, crop, resize_shorter):
        self.decode = ops.decoders.ImageRandomCrop(
            device="mixed",
            output_type=types.DALIImageType.RGB,
            random_aspect_ratio=[3. / 4., 4. / 3.],
            random_area=[0.08, 1.0],
            num_attempts=100)
        self.res = ops.Resize(device="gpu", resize_x=crop, resize_y=crop, interp_type=types.INTERP_LINEAR)
        self.cmnp = ops.CropMirrorNormalize(
            device="gpu",
            dtype=types.FLOAT,
            output_layout="CHW",
            crop=(crop, crop),
            mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
            std=[0.229 * 255, 0.224 * 255, 0.225 * 255])
        self.coin = ops.random.CoinFlip(probability=0.5)
        self.to_int64 = ops.Cast(dtype=types.DALIDataType.INT64, device="gpu")

    def define_graph(self):
        rng = self.coin()
        jpegs, labels = self.input(name="Reader")
        images = self.decode(jpegs)
        images = self.res(images)
        output = self.cmnp(images.gpu(), mirror=rng)
        return [output, self.to_int64(labels.gpu())]


class HybridValPipe(HybridPipeBase):
    def build_ops(self, crop, resize_shorter):
        self.decode = ops.decoders.Image(device="mixed")
        self.res = ops.Resize(device="gpu", resize_shorter=resize_shorter, interp_type=types.INTERP_LINEAR)
        self.cmnp = ops.CropMirrorNormalize(
            device="gpu",
            dtype=types.FLOAT,
            output_layout="CHW",
            crop=(crop, crop),
            mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
            std=[0.229 * 255, 0.224 * 255, 0.225 * 255])
        self.to_int64 = ops.Cast(dtype=types.DALIDataType.INT64, device="gpu")

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        images = self.decode(jpegs)
        images = self.res(images)
        output = self.cmnp(images)
        return [output, self.to_int64(labels.gpu())]


def dali_dataloader(args, mode, device):
    assert "gpu" in device, "gpu training is required for DALI"
    device_id = int(device.split(':')[1])
    shard_id = paddle.distributed.get_rank()
    num_shards = paddle.distributed.get_world_size()

    file_root = args.image_root
    pipe_class = None

    if mode == TRAIN:
        file_root = os.path.join(file_root, 'train')
        pipe_class = HybridTrainPipe
    else:
        file_root = os.path.join(file_root, 'val')
        pipe_class = HybridValPipe

    pipe = pipe_class(
        file_root,
        args.batch_size,
        device_id,
        args.crop_size,
        resize_shorter=args.resize_short,
        num_threads=args.dali_num_threads,
        seed=args.dali_random_seed + shard_id,
        shard_id=shard_id,
        num_shards=num_shards)
    pipe.build()
    return DALIGenericIterator([pipe], ['data', 'label'], reader_name='Reader')


def build_dataloader(args, mode):
    return dali_dataloader(args, mode, paddle.device.get_device())
