# golden-verify: pipe=make_train_pipeline args=(str(DATA / "images"), 4, 2, None) iterations=8
# golden-verify: pipe=make_train_pipeline args=(str(DATA / "images"), 5, 2, None) kwargs={"shard_id": 1, "num_shards": 2} iterations=5
"""Training loader built by hand: the pipeline object first, then the settings its graph reads,
then `with pipe:`, as training scripts written against older DALI examples do."""
import argparse
import os

import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin.pytorch import DALIClassificationIterator


def make_train_pipeline(data_dir, batch_size, workers, device_id, input_size=64, shard_id=0, num_shards=1):
    pipe = Pipeline(
        batch_size=batch_size,
        num_threads=workers,
        device_id=device_id,
        prefetch_queue_depth=2,
        seed=shard_id + 1467,
    )

    is_training = False
    device_memory_padding = 211025920
    host_memory_padding = 140544512
    mean = [0.48145466, 0.4578275, 0.40821073]

    with pipe:
        jpegs, labels = fn.readers.file(
            file_root=data_dir,
            num_shards=num_shards,
            shard_id=shard_id,
            random_shuffle=False,
            pad_last_batch=True,
            name="train",
        )
        if is_training:
            images = fn.decoders.image_random_crop(
                jpegs,
                device="mixed",
                output_type=types.RGB,
                device_memory_padding=device_memory_padding,
                host_memory_padding=host_memory_padding,
                random_area=[0.7, 1.0],
            )
            images = fn.resize(images, device="gpu", resize_x=input_size, resize_y=input_size)
            mirror = fn.random.coin_flip(probability=0.5)
        else:
            images = fn.decoders.image(
                jpegs,
                device="mixed",
                output_type=types.RGB,
                device_memory_padding=device_memory_padding,
                host_memory_padding=host_memory_padding,
            )
            images = fn.resize(images, device="gpu", size=int(256 / 224 * input_size), mode="not_smaller")
            mirror = False
        std = [0.26862954, 0.26130258, 0.27577711]
        images = fn.crop_mirror_normalize(
            images.gpu(),
            dtype=types.FLOAT,
            output_layout="CHW",
            crop=(input_size, input_size),
            mean=[x * 255 for x in mean],
            std=[x * 255 for x in std],
            mirror=mirror)
        pipe.set_outputs(images, labels)
    pipe.build()
    return pipe


def dali_dataloader(args):
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    pipe = make_train_pipeline(args.train_data, args.batch_size, args.workers, local_rank,
                               input_size=args.input_size, shard_id=local_rank, num_shards=world_size)
    return DALIClassificationIterator(pipelines=[pipe], reader_name="train")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("train_data")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--input-size", type=int, default=224)
    args = parser.parse_args()
    loader = dali_dataloader(args)
    for epoch in range(2):
        for data in loader:
            images, labels = data[0]["data"], data[0]["label"]


if __name__ == "__main__":
    main()
