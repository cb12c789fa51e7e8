"""Helpers called where writing them into the pipeline would change what runs: left as written."""
from nvidia.dali import fn, pipeline_def


def blur(img, sigma):
    return fn.gaussian_blur(img, sigma=sigma)


def is_large(img):
    return fn.shapes(img)[0] > 64


@pipeline_def(num_threads=2, device_id=0)
def repeated_blur(data_dir, times=2):
    jpegs, labels = fn.readers.file(file_root=data_dir)
    images = fn.decoders.image(jpegs, device="mixed")
    for _ in range(times):
        images = blur(images, 1.5)
    return images, labels


@pipeline_def(num_threads=2, device_id=0, enable_conditionals=True)
def blur_large(data_dir):
    jpegs, labels = fn.readers.file(file_root=data_dir)
    images = fn.decoders.image(jpegs, device="mixed")
    if is_large(images):
        images = blur(images, 2.0)
    return images, labels
