# golden-verify: pipe=train_pipe args=(str(DATA / "images"),) iterations=8
# golden-run: pipe=eval_pipe args=(str(DATA / "images"),) iterations=12
"""Augmentations half removed: a value is still drawn or computed but nothing uses it any more."""
from nvidia.dali import fn, pipeline_def, types


@pipeline_def(batch_size=4, num_threads=2, device_id=0, seed=42)
def train_pipe(image_dir):
    jpegs, labels = fn.readers.file(file_root=image_dir, random_shuffle=True, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, resize_x=64, resize_y=64)
    saturation = fn.random.uniform(range=[0.6, 1.4])  # was for fn.hsv, since dropped
    brightness = fn.random.uniform(range=[0.8, 1.2])
    images = fn.brightness_contrast(images, brightness=brightness, contrast=1.1)
    return images, labels


@pipeline_def(batch_size=4, num_threads=2, device_id=0)
def eval_pipe(image_dir):
    jpegs, labels = fn.readers.file(file_root=image_dir, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    preview = fn.resize(images, resize_x=32, resize_y=32)
    images = fn.resize(images, resize_x=64, resize_y=64)
    return images, labels
