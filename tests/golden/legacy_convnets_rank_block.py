# golden-verify: pipe=HybridTrainPipe kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "data_dir": str(DATA / "images"), "interpolation": "bilinear", "crop": 32, "dali_cpu": True} iterations=7
# golden-run: pipe=HybridValPipe kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "data_dir": str(DATA / "images"), "interpolation": "triangular", "crop": 24, "size": 32} iterations=7
"""The ImageNet loaders of NVIDIA's ConvNets training scripts: each pipeline shards its reader by
the rank and world size it asks torch.distributed for, and the loader factory asks again, with the
same statements, to split the epoch among the processes."""
import os

import torch
from nvidia.dali.plugin.pytorch import DALIClassificationIterator
from nvidia.dali.pipeline import Pipeline
import nvidia.dali.ops as ops
import nvidia.dali.types as types


class HybridTrainPipe(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data_dir, interpolation, crop, dali_cpu=False):
        super(HybridTrainPipe, self).__init__(batch_size, num_threads, device_id, seed=12)
        interpolation = {
            "bicubic": types.INTERP_CUBIC,
            "bilinear": types.INTERP_LINEAR,
            "triangular": types.INTERP_TRIANGULAR,
        }[interpolation]
        if torch.distributed.is_initialized():
            rank = torch.distributed.get_rank()
            world_size = torch.distributed.get_world_size()
        else:
            rank = 0
            world_size = 1

        self.input = ops.FileReader(
            file_root=data_dir,
            shard_id=rank,
            num_shards=world_size,
            random_shuffle=True,
            pad_last_batch=True,
        )

        if dali_cpu:
            dali_device = "cpu"
            self.decode = ops.ImageDecoder(device=dali_device, output_type=types.RGB)
        else:
            dali_device = "gpu"
            # This padding sets the size of the internal nvJPEG buffers to be able to handle all
            # images from full-sized ImageNet without additional reallocations
            self.decode = ops.ImageDecoder(device="mixed", output_type=types.RGB,
                                           device_memory_padding=211025920, host_memory_padding=140544512)

        self.res = ops.RandomResizedCrop(device=dali_device, size=[crop, crop], interp_type=interpolation,
                                         random_aspect_ratio=[0.75, 4.0 / 3.0], random_area=[0.08, 1.0],
                                         num_attempts=100, antialias=False)
        self.cmnp = ops.CropMirrorNormalize(device="gpu", dtype=types.FLOAT, output_layout=types.NCHW,
                                            crop=(crop, crop),
                                            mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                            std=[0.229 * 255, 0.224 * 255, 0.225 * 255])
        self.coin = ops.CoinFlip(probability=0.5)

    def define_graph(self):
        rng = self.coin()
        self.jpegs, self.labels = self.input(name="Reader")
        images = self.decode(self.jpegs)
        images = self.res(images)
        output = self.cmnp(images.gpu(), mirror=rng)
        return [output, self.labels]


class HybridValPipe(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data_dir, interpolation, crop, size):
        super(HybridValPipe, self).__init__(batch_size, num_threads, device_id, seed=12)
        interpolation = {
            "bicubic": types.INTERP_CUBIC,
            "bilinear": types.INTERP_LINEAR,
            "triangular": types.INTERP_TRIANGULAR,
        }[interpolation]
        if torch.distributed.is_initialized():
            rank = torch.distributed.get_rank()
            world_size = torch.distributed.get_world_size()
        else:
            rank = 0
            world_size = 1

        self.input = ops.FileReader(file_root=data_dir, shard_id=rank, num_shards=world_size,
                                    random_shuffle=False, pad_last_batch=True)
        self.decode = ops.ImageDecoder(device="mixed", output_type=types.RGB)
        self.res = ops.Resize(device="gpu", resize_shorter=size, interp_type=interpolation, antialias=False)
        self.cmnp = ops.CropMirrorNormalize(device="gpu", dtype=types.FLOAT, output_layout=types.NCHW,
                                            crop=(crop, crop),
                                            mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                            std=[0.229 * 255, 0.224 * 255, 0.225 * 255])

    def define_graph(self):
        self.jpegs, self.labels = self.input(name="Reader")
        images = self.decode(self.jpegs)
        images = self.res(images)
        output = self.cmnp(images)
        return [output, self.labels]


class DALIWrapper(object):
    def gen_wrapper(dalipipeline, memory_format):
        for data in dalipipeline:
            input = data[0]["data"].contiguous(memory_format=memory_format)
            target = torch.reshape(data[0]["label"], [-1]).cuda().long()
            yield input, target
        dalipipeline.reset()

    def __init__(self, dalipipeline, memory_format):
        self.dalipipeline = dalipipeline
        self.memory_format = memory_format

    def __iter__(self):
        return DALIWrapper.gen_wrapper(self.dalipipeline, self.memory_format)


def get_dali_train_loader(dali_cpu=False):
    def gdtl(data_path, image_size, batch_size, interpolation="bilinear", workers=5,
             memory_format=torch.contiguous_format, **kwargs):
        if torch.distributed.is_initialized():
            rank = torch.distributed.get_rank()
            world_size = torch.distributed.get_world_size()
        else:
            rank = 0
            world_size = 1

        traindir = os.path.join(data_path, "train")
        pipe = HybridTrainPipe(batch_size=batch_size, num_threads=workers,
                               device_id=rank % torch.cuda.device_count(), data_dir=traindir,
                               interpolation=interpolation, crop=image_size, dali_cpu=dali_cpu)
        pipe.build()
        train_loader = DALIClassificationIterator(pipe, reader_name="Reader", fill_last_batch=False)
        return (
            DALIWrapper(train_loader, memory_format),
            int(pipe.epoch_size("Reader") / (world_size * batch_size)),
        )

    return gdtl


def get_dali_val_loader():
    def gdvl(data_path, image_size, batch_size, interpolation="bilinear", crop_padding=32, workers=5,
             memory_format=torch.contiguous_format, **kwargs):
        if torch.distributed.is_initialized():
            rank = torch.distributed.get_rank()
            world_size = torch.distributed.get_world_size()
        else:
            rank = 0
            world_size = 1

        valdir = os.path.join(data_path, "val")
        pipe = HybridValPipe(batch_size=batch_size, num_threads=workers,
                             device_id=rank % torch.cuda.device_count(), data_dir=valdir,
                             interpolation=interpolation, crop=image_size, size=image_size + crop_padding)
        pipe.build()
        val_loader = DALIClassificationIterator(pipe, reader_name="Reader", fill_last_batch=False)
        return (
            DALIWrapper(val_loader, memory_format),
            int(pipe.epoch_size("Reader") / (world_size * batch_size)),
        )

    return gdvl
