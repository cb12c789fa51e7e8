# golden-verify: pipe=rn50_train args=(str(DATA / "images"),) kwargs={"crop": 32, "batch_size": 8} iterations=4
"""ResNet-50 style training augmentation."""
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import pipeline_def


@pipeline_def(batch_size=64, num_threads=8, device_id=0, seed=42)
def rn50_train(data_dir, crop=224, shard_id=0, num_shards=1):
    jpegs, labels = fn.readers.file(
        file_root=data_dir,
        shard_id=shard_id,
        num_shards=num_shards,
        random_shuffle=True,
        pad_last_batch=True,
        name="Reader",
    )
    images = fn.decoders.image_random_crop(jpegs, device="mixed", output_type=types.RGB, random_area=[0.1, 1.0])
    images = fn.resize(images, device="gpu", resize_x=crop, resize_y=crop)
    angle = fn.random.uniform(range=(-10.0, 10.0))
    images = fn.rotate(images, angle=angle, keep_size=True)
    images = fn.noise.gaussian(images, stddev=2.0)
    mirror = fn.random.coin_flip(probability=0.5)
    images = fn.crop_mirror_normalize(
        images,
        dtype=types.FLOAT,
        output_layout="CHW",
        crop=(crop, crop),
        mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
        std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
        mirror=mirror,
    )
    return images, labels.gpu()


@pipeline_def(batch_size=64, num_threads=8, device_id=0, seed=42)
def rn50_train_rrc(data_dir):
    jpegs, labels = fn.readers.file(file_root=data_dir, random_shuffle=True)
    images = fn.decoders.image(jpegs, device="mixed")
    images = fn.random_resized_crop(images, size=(224, 224), random_area=(0.08, 1.0))
    return images, labels
