# golden-verify: pipe=train_pipe args=(str(DATA / "images"),) iterations=8
# golden-run: pipe=eval_pipe args=(str(DATA / "images"),) iterations=12
"""Augmentations half removed: a value is still drawn or computed but nothing uses it any more."""
import secrets
from nvidia.dali import types
import nvidia.dali.experimental.dynamic as ndd


def train_pipe(image_dir, *, batch_size=4, num_threads=2, device_id=0, seed=42):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng = ndd.random.RNG(seed=seed_or_random)
    reader = ndd.readers.File(file_root=image_dir, random_shuffle=True, seed=seed_or_random)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                images = ndd.resize(images, resize_x=64, resize_y=64)
                saturation = ndd.random.uniform(range=[0.6, 1.4], batch_size=batch_size, rng=rng)  # was for fn.hsv, since dropped
                brightness = ndd.random.uniform(range=[0.8, 1.2], batch_size=batch_size, rng=rng)
                images = ndd.brightness_contrast(images, brightness=brightness, contrast=1.1)
                outputs = images, labels
            yield outputs


def eval_pipe(image_dir, *, batch_size=4, num_threads=2, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=image_dir)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                preview = ndd.resize(images, resize_x=32, resize_y=32)
                images = ndd.resize(images, resize_x=64, resize_y=64)
                outputs = images, labels
            yield outputs
