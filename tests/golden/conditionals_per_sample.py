# golden-run: pipe=exposure_pipe args=(str(DATA / "images"),) kwargs={"batch_size": 5} iterations=9
"""Classification input pipeline that corrects each image's exposure on its own (DALI conditionals)."""
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import pipeline_def


@pipeline_def(num_threads=4, device_id=0, enable_conditionals=True)
def exposure_pipe(data_dir, size=32, fix_small=True):
    jpegs, labels = fn.readers.file(file_root=data_dir, name="Reader")
    # the longest side, from the encoded header (no decoding needed)
    longest = fn.reductions.max(fn.peek_image_shape(jpegs))
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    brightness = fn.reductions.mean(images)
    if brightness < 110:  # too dark
        images = fn.brightness_contrast(images, brightness=1.5)
    elif brightness > 150:
        images = fn.brightness_contrast(images, contrast=0.7)
        if longest > 55:
            images = fn.gaussian_blur(images, window_size=3)
    if fix_small:
        if not longest >= 40:
            images = fn.resize(images, resize_longer=2 * size)
    images = fn.resize(images, resize_x=size, resize_y=size)
    return images, labels
