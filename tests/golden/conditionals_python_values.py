# golden-run: pipe=train_pipe args=(str(DATA / "images"), {"flip": False, "blur": 3}) kwargs={"batch_size": 4} iterations=8
"""Augmentations chosen by a config dict and arguments: Python conditions, decided when the
pipeline is built (enable_conditionals=True only matters for conditions on DALI data)."""
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import pipeline_def

IMAGE_SIZE = 32


@pipeline_def(num_threads=2, device_id=0, enable_conditionals=True)
def train_pipe(data_dir, config, mode="train", augmentations=("flip", "blur")):
    jpegs, labels = fn.readers.file(file_root=data_dir, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    if mode == "train" and IMAGE_SIZE > 16:
        images = fn.resize(images, resize_x=IMAGE_SIZE, resize_y=IMAGE_SIZE)
    else:
        images = fn.resize(images, resize_shorter=IMAGE_SIZE)
        images = fn.crop(images, crop=(IMAGE_SIZE, IMAGE_SIZE))
    for name in augmentations:
        if name == "flip":
            images = fn.flip(images, horizontal=1)
    if config["flip"]:
        images = fn.flip(images, vertical=1)
    elif config.get("blur"):
        images = fn.gaussian_blur(images, window_size=config["blur"])
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, mirror=1 if mode == "train" else 0)
    return images, labels
