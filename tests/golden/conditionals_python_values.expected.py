# golden-run: pipe=train_pipe args=(str(DATA / "images"), {"flip": False, "blur": 3}) kwargs={"batch_size": 4} iterations=8
"""Augmentations chosen by a config dict and arguments: Python conditions, decided when the
pipeline is built (enable_conditionals=True only matters for conditions on DALI data)."""
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd

IMAGE_SIZE = 32


def train_pipe(data_dir, config, mode="train", augmentations=("flip", "blur"), *, batch_size, num_threads=2, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=data_dir)
    # evaluated once, as when the pipeline was built
    cond_flip = bool(config["flip"])
    cond_blur = not cond_flip and bool(config.get("blur"))

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        while True:
            for jpegs, labels in reader.next_epoch(batch_size=batch_size):
                with ctx:
                    images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                    if mode == "train" and IMAGE_SIZE > 16:
                        images = ndd.resize(images, resize_x=IMAGE_SIZE, resize_y=IMAGE_SIZE)
                    else:
                        images = ndd.resize(images, resize_shorter=IMAGE_SIZE)
                        images = ndd.crop(images, crop=(IMAGE_SIZE, IMAGE_SIZE))
                    for name in augmentations:
                        if name == "flip":
                            images = ndd.flip(images, horizontal=1)
                    if cond_flip:
                        images = ndd.flip(images, vertical=1)
                    elif cond_blur:
                        images = ndd.gaussian_blur(images, window_size=config["blur"])
                    images = ndd.crop_mirror_normalize(images, dtype=types.FLOAT, mirror=1 if mode == "train" else 0)
                    outputs = images, labels
                yield outputs

    return batches()
