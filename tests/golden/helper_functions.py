# golden-verify: pipe=training_pipe args=(str(DATA / "images"),) kwargs=dict(batch_size=4) iterations=6
# golden-run: pipe=validation_pipe args=(str(DATA / "images"),) kwargs=dict(batch_size=4) iterations=8
# golden-run: pipe=validation_pipe_small args=(str(DATA / "images"),) kwargs=dict(batch_size=3) iterations=8
"""Augmentations split into functions, as DALI's EfficientNet example writes them."""
import math

from nvidia.dali import fn, pipeline_def, types
from nvidia.dali.types import DALIInterpType


def processing_training_pipe(jpegs, image_size, interpolation=DALIInterpType.INTERP_LINEAR, dali_device="gpu"):
    images = fn.decoders.image_random_crop(
        jpegs,
        device="mixed",
        output_type=types.RGB,
        random_aspect_ratio=[0.75, 4.0 / 3.0],
        random_area=[0.08, 1.0],
    )
    images = fn.resize(images, resize_x=image_size, resize_y=image_size, interp_type=interpolation)
    # computed once, when the pipeline is built
    angle = math.degrees(0.1)
    images = fn.rotate(images, angle=angle, keep_size=True)
    rng = fn.random.coin_flip(probability=0.5)
    images = fn.flip(images, horizontal=rng)
    return normalize(images, image_size)


def normalize(images, crop):
    output = fn.crop_mirror_normalize(
        images,
        dtype=types.FLOAT,
        output_layout="CHW",
        crop=(crop, crop),
        mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
        std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
    )
    return output


def processing_validation_pipe(jpegs, image_size, image_crop):
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, resize_shorter=image_size, interp_type=types.INTERP_TRIANGULAR, antialias=False)
    output = normalize(images, image_crop)
    return output


@pipeline_def(num_threads=2, device_id=0, seed=12)
def training_pipe(data_dir, image_size=64, rank=0, world_size=1):
    jpegs, labels = fn.readers.file(
        name="Reader",
        file_root=data_dir,
        shard_id=rank,
        num_shards=world_size,
        random_shuffle=True,
        pad_last_batch=True,
    )
    images = processing_training_pipe(jpegs, image_size)
    return images, labels


@pipeline_def(num_threads=2, device_id=0)
def validation_pipe(data_dir, image_size=72, image_crop=64, rank=0, world_size=1):
    jpegs, label = fn.readers.file(
        name="Reader",
        file_root=data_dir,
        shard_id=rank,
        num_shards=world_size,
        random_shuffle=False,
        pad_last_batch=True,
    )
    outputs = processing_validation_pipe(jpegs, image_size, image_crop)
    return outputs, label


@pipeline_def(num_threads=2, device_id=0)
def validation_pipe_small(data_dir):
    jpegs, label = fn.readers.file(file_root=data_dir, name="Reader")
    images = processing_validation_pipe(jpegs, 40, image_crop=32)
    return images, label
