"""ResNet-50 style training input, the way many projects write it (GPU decoding, random crops)."""

import argparse

import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import pipeline_def


@pipeline_def(num_threads=4, device_id=0, seed=12)
def train_pipe(data_dir, crop=224, shard_id=0, num_shards=1):
    jpegs, labels = fn.readers.file(
        file_root=data_dir,
        random_shuffle=True,
        shard_id=shard_id,
        num_shards=num_shards,
        pad_last_batch=True,
        name="Reader",
    )
    images = fn.decoders.image_random_crop(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, resize_x=crop, resize_y=crop)
    mirror = fn.random.coin_flip(probability=0.5)
    images = fn.crop_mirror_normalize(
        images,
        dtype=types.FLOAT,
        output_layout="CHW",
        mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
        std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
        mirror=mirror,
    )
    return images, labels.gpu()


@pipeline_def(num_threads=4, device_id=0)
def val_pipe(data_dir, size=256, crop=224):
    jpegs, labels = fn.readers.file(file_root=data_dir, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed")
    images = fn.resize(images, resize_shorter=size)
    images = fn.crop_mirror_normalize(
        images,
        dtype=types.FLOAT,
        output_layout="CHW",
        crop=(crop, crop),
        mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
        std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
    )
    return images, labels.gpu()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("train_dir")
    parser.add_argument("val_dir")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()

    train = train_pipe(args.train_dir, batch_size=args.batch_size, prefetch_queue_depth=2)
    train.build()
    val = val_pipe(args.val_dir, batch_size=args.batch_size)
    val.build()
    for step in range(args.steps):
        images, labels = train.run()
        # ... forward / backward on images ...
    images, labels = val.run()
    print(labels.as_cpu().at(0))


if __name__ == "__main__":
    main()
