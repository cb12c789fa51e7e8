"""A training-style pipeline used by the equivalence (verify) tests. Top-level code below must never run."""

import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import pipeline_def

CROP = 24


@pipeline_def(batch_size=4, num_threads=2, device_id=0, seed=5)
def augment(root, crop=CROP):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
    images = fn.decoders.image_random_crop(jpegs, device="mixed")
    images = fn.resize(images, resize_x=crop, resize_y=crop)
    angle = fn.random.uniform(range=[-30.0, 30.0])
    images = fn.rotate(images, angle=angle, fill_value=0, keep_size=True)
    images = fn.noise.gaussian(images, stddev=3.0)
    mirror = fn.random.coin_flip(probability=0.5)
    images = fn.crop_mirror_normalize(
        images,
        dtype=types.FLOAT,
        output_layout="CHW",
        mean=[120.0, 115.0, 100.0],
        std=[60.0, 60.0, 60.0],
        mirror=mirror,
    )
    return images, labels.gpu()


pipe = augment("/home/someone/imagenet/train")
pipe.build()
raise SystemExit("top-level code of a verified file must not run")
