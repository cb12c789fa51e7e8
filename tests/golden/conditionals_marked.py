"""Conditionals dali-migrate leaves to a person, each with the reason and the line."""
import random

from nvidia.dali import fn, pipeline_def, types

USE_CONDITIONALS = True


@pipeline_def(batch_size=4, enable_conditionals=True)
def random_in_branch(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    if fn.reductions.mean(images) > 100:
        images = fn.rotate(images, angle=fn.random.uniform(range=(-10.0, 10.0)))
    return images, labels


@pipeline_def(batch_size=4, enable_conditionals=True)
def logical_and(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    brightness = fn.reductions.mean(images)
    if brightness > 50 and brightness < 200:
        images = fn.flip(images, horizontal=1)
    return images, labels


@pipeline_def(batch_size=4, enable_conditionals=True)
def set_in_one_branch(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    if fn.reductions.mean(images) > 100:
        mirrored = fn.flip(images, horizontal=1)
    return mirrored, labels


@pipeline_def(batch_size=4, enable_conditionals=True)
def python_values_in_branches(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    if fn.reductions.mean(images) > 100:
        print("bright images get a random blur")
        sigma = random.uniform(0.5, 1.5)
        images = fn.gaussian_blur(images, sigma=sigma)
        weight = 0.5
    else:
        weight = 1.0
    return images, labels, fn.cast(labels, dtype=types.FLOAT) * weight


@pipeline_def(batch_size=4, enable_conditionals=True)
def build_time_coin(root, repeats=2):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    for _ in range(repeats):
        if random.random() < 0.5:
            images = fn.rotate(images, angle=90.0)
    return images, labels


@pipeline_def(batch_size=4, enable_conditionals=True)
def ternary_on_data(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    images = fn.flip(images, horizontal=1) if fn.random.coin_flip() else images
    return images, labels


@pipeline_def(batch_size=4, enable_conditionals=USE_CONDITIONALS)
def computed_setting(root):
    jpegs, labels = fn.readers.file(file_root=root)
    return fn.decoders.image(jpegs), labels
