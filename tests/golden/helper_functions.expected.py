# golden-verify: pipe=training_pipe args=(str(DATA / "images"),) kwargs=dict(batch_size=4) iterations=6
# golden-run: pipe=validation_pipe args=(str(DATA / "images"),) kwargs=dict(batch_size=4) iterations=8
# golden-run: pipe=validation_pipe_small args=(str(DATA / "images"),) kwargs=dict(batch_size=3) iterations=8
"""Augmentations split into functions, as DALI's EfficientNet example writes them."""
import math
import secrets

from nvidia.dali import types
from nvidia.dali.types import DALIInterpType
import nvidia.dali.experimental.dynamic as ndd


def training_pipe(data_dir, image_size=64, rank=0, world_size=1, *, batch_size, num_threads=2, device_id=0, seed=12):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng_2 = ndd.random.RNG(seed=seed_or_random)
    reader = ndd.readers.File(
        file_root=data_dir,
        shard_id=rank,
        num_shards=world_size,
        random_shuffle=True,
        pad_last_batch=True,
        seed=seed_or_random,
    )
    # computed once, when the pipeline is built
    angle = math.degrees(0.1)

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        while True:
            for jpegs, labels in reader.next_epoch(batch_size=batch_size):
                with ctx:
                    images_2 = ndd.decoders.image_random_crop(
                        jpegs,
                        device="gpu",
                        output_type=types.RGB,
                        random_aspect_ratio=[0.75, 4.0 / 3.0],
                        random_area=[0.08, 1.0],
                        batch_size=batch_size,
                        rng=rng_2,
                    )
                    images_2 = ndd.resize(images_2, resize_x=image_size, resize_y=image_size, interp_type=DALIInterpType.INTERP_LINEAR)
                    images_2 = ndd.rotate(images_2, angle=angle, keep_size=True)
                    rng = ndd.random.coin_flip(probability=0.5, batch_size=batch_size, rng=rng_2)
                    images_2 = ndd.flip(images_2, horizontal=rng)
                    output = ndd.crop_mirror_normalize(
                        images_2,
                        dtype=types.FLOAT,
                        output_layout="CHW",
                        crop=(image_size, image_size),
                        mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                        std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
                    )
                    images = output
                    outputs_2 = images, labels
                yield outputs_2

    return batches()


def validation_pipe(data_dir, image_size=72, image_crop=64, rank=0, world_size=1, *, batch_size, num_threads=2, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(
        file_root=data_dir,
        shard_id=rank,
        num_shards=world_size,
        random_shuffle=False,
        pad_last_batch=True,
    )
    while True:
        for jpegs, label in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                images = ndd.resize(images, resize_shorter=image_size, interp_type=types.INTERP_TRIANGULAR, antialias=False)
                output_2 = ndd.crop_mirror_normalize(
                    images,
                    dtype=types.FLOAT,
                    output_layout="CHW",
                    crop=(image_crop, image_crop),
                    mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                    std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
                )
                output = output_2
                outputs = output
                outputs_2 = outputs, label
            yield outputs_2


def validation_pipe_small(data_dir, *, batch_size, num_threads=2, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=data_dir)
    while True:
        for jpegs, label in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images_3 = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                images_3 = ndd.resize(images_3, resize_shorter=40, interp_type=types.INTERP_TRIANGULAR, antialias=False)
                output_3 = ndd.crop_mirror_normalize(
                    images_3,
                    dtype=types.FLOAT,
                    output_layout="CHW",
                    crop=(32, 32),
                    mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                    std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
                )
                output = output_3
                images = output
                outputs_2 = images, label
            yield outputs_2
