# golden-run: pipe=val_pipe args=(str(DATA / "images"),) kwargs={"batch_size": 4, "crop": 48, "shard_id": 0, "num_shards": 1, "shuffle": False} iterations=8
# golden-verify: pipe=train_pipe args=(str(DATA / "images"),) kwargs={"batch_size": 4, "crop": 48, "shard_id": 1, "num_shards": 2, "shuffle": False} iterations=6
"""ImageNet loaders for PyTorch: a training and a validation pipeline function, the loader picks
one with a conditional expression and wraps what it makes in DALI's PyTorch iterator."""
import os

import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import pipeline_def
from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


@pipeline_def
def train_pipe(data_dir, crop, shard_id, num_shards, shuffle=True):
    jpegs, labels = fn.readers.file(file_root=data_dir, shard_id=shard_id, num_shards=num_shards,
                                    random_shuffle=shuffle, pad_last_batch=True, name="Reader")
    images = fn.decoders.image_random_crop(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, resize_x=crop, resize_y=crop)
    mirror = fn.random.coin_flip(probability=0.5)
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                      mean=MEAN, std=STD, mirror=mirror)
    return images, labels.gpu()


@pipeline_def
def val_pipe(data_dir, crop, shard_id, num_shards, shuffle=False):
    jpegs, labels = fn.readers.file(file_root=data_dir, shard_id=shard_id, num_shards=num_shards,
                                    random_shuffle=shuffle, pad_last_batch=True, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, resize_shorter=crop * 8 // 7)
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                      crop=(crop, crop), mean=MEAN, std=STD)
    return images, labels.gpu()


def get_loader(args, is_training):
    data_dir = os.path.join(args.data, "train" if is_training else "val")
    pipeline = train_pipe if is_training else val_pipe
    pipe = pipeline(data_dir,
                    crop=args.crop,
                    shard_id=args.local_rank,
                    num_shards=args.world_size,
                    shuffle=is_training,
                    batch_size=args.batch_size,
                    num_threads=args.workers,
                    device_id=args.local_rank,
                    seed=12 + args.local_rank)
    pipe.build()
    return DALIGenericIterator(pipe, ["data", "label"], reader_name="Reader",
                               last_batch_policy=LastBatchPolicy.PARTIAL, auto_reset=True)


def train(args, model):
    loader = get_loader(args, is_training=True)
    for epoch in range(args.epochs):
        for data in loader:
            images, target = data[0]["data"], data[0]["label"].squeeze(-1).long()
            model.step(images, target)
