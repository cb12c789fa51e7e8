# golden-verify: pipe=create_dali_pipeline kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "data_dir": str(DATA / "images"), "crop": 64, "size": 80, "shard_id": 0, "num_shards": 1, "dali_cpu": True, "seed": 7} iterations=8
# golden-verify: pipe=create_dali_pipeline kwargs={"batch_size": 5, "num_threads": 2, "device_id": None, "data_dir": str(DATA / "images"), "crop": 64, "size": 80, "shard_id": 1, "num_shards": 2, "dali_cpu": True, "is_training": False} iterations=4
"""ImageNet training with DALI's PyTorch iterator, the pipelines built by hand in a function."""
import argparse
import os

import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin.pytorch import DALIClassificationIterator, LastBatchPolicy


def create_dali_pipeline(batch_size, num_threads, device_id, data_dir, crop, size, shard_id, num_shards,
                         dali_cpu=False, is_training=True, seed=12):
    pipeline = Pipeline(batch_size, num_threads, device_id, seed=seed)
    with pipeline:
        images, labels = fn.readers.file(file_root=data_dir,
                                         shard_id=shard_id,
                                         num_shards=num_shards,
                                         random_shuffle=is_training,
                                         pad_last_batch=True,
                                         name="Reader")
        dali_device = "cpu" if dali_cpu else "gpu"
        decoder_device = "cpu" if dali_cpu else "mixed"
        if is_training:
            images = fn.decoders.image_random_crop(images,
                                                   device=decoder_device, output_type=types.RGB,
                                                   random_aspect_ratio=[0.8, 1.25],
                                                   random_area=[0.1, 1.0],
                                                   num_attempts=100)
            images = fn.resize(images,
                               device=dali_device,
                               resize_x=crop,
                               resize_y=crop,
                               interp_type=types.INTERP_TRIANGULAR)
            mirror = fn.random.coin_flip(probability=0.5)
        else:
            images = fn.decoders.image(images,
                                       device=decoder_device,
                                       output_type=types.RGB)
            images = fn.resize(images,
                               device=dali_device,
                               size=size,
                               mode="not_smaller",
                               interp_type=types.INTERP_TRIANGULAR)
            mirror = False

        images = fn.crop_mirror_normalize(images.gpu(),
                                          dtype=types.FLOAT,
                                          output_layout="CHW",
                                          crop=(crop, crop),
                                          mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                          std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
                                          mirror=mirror)
        labels = labels.gpu()
        pipeline.set_outputs(images, labels)
    return pipeline


def build_loaders(args):
    train_dir = os.path.join(args.data, "train")
    pipe = create_dali_pipeline(batch_size=args.batch_size,
                                num_threads=args.workers,
                                device_id=args.local_rank,
                                seed=12 + args.local_rank,
                                data_dir=train_dir,
                                crop=args.crop,
                                size=args.size,
                                dali_cpu=args.dali_cpu,
                                shard_id=args.local_rank,
                                num_shards=args.world_size,
                                is_training=True)
    pipe.build()
    train_loader = DALIClassificationIterator(pipe, reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL, auto_reset=True)

    val_pipe = create_dali_pipeline(batch_size=args.batch_size,
                                    num_threads=args.workers,
                                    device_id=args.local_rank,
                                    data_dir=os.path.join(args.data, "val"),
                                    crop=args.crop,
                                    size=args.size,
                                    dali_cpu=args.dali_cpu,
                                    shard_id=args.local_rank,
                                    num_shards=args.world_size,
                                    is_training=False)
    val_pipe.build()
    val_loader = DALIClassificationIterator(val_pipe, reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL, auto_reset=True)
    return train_loader, val_loader


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("data")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--crop", type=int, default=224)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--dali_cpu", action="store_true")
    parser.add_argument("--local_rank", type=int, default=0)
    args = parser.parse_args()
    args.world_size = int(os.environ.get("WORLD_SIZE", 1))
    train_loader, val_loader = build_loaders(args)
    for epoch in range(2):
        for i, data in enumerate(train_loader):
            images, target = data[0]["data"], data[0]["label"].squeeze(-1).long()
        for data in val_loader:
            images, target = data[0]["data"], data[0]["label"]


if __name__ == "__main__":
    main()
