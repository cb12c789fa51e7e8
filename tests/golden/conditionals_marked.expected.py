"""Conditionals dali-migrate leaves to a person, each with the reason and the line."""
import random

from nvidia.dali import fn, pipeline_def, types

USE_CONDITIONALS = True


# dali-migrate: [pipeline-def] pipeline not converted: fn.random.uniform inside a branch of an `if` on DALI data draws random numbers for that branch's samples only: not converted automatically yet, convert by hand (line 5 of random_in_branch())
@pipeline_def(batch_size=4, enable_conditionals=True)
def random_in_branch(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    if fn.reductions.mean(images) > 100:
        images = fn.rotate(images, angle=fn.random.uniform(range=(-10.0, 10.0)))
    return images, labels


# dali-migrate: [pipeline-def] pipeline not converted: `if brightness > 50 and brightness < 200:`: `and`/`or` on DALI data work sample by sample; not converted automatically yet, convert by hand (line 5 of logical_and())
@pipeline_def(batch_size=4, enable_conditionals=True)
def logical_and(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    brightness = fn.reductions.mean(images)
    if brightness > 50 and brightness < 200:
        images = fn.flip(images, horizontal=1)
    return images, labels


# dali-migrate: [pipeline-def] pipeline not converted: `if fn.reductions.mean(images) > 100:` sets `mirrored` in one branch only and it is read after the `if` (DALI raises): give it a value in both branches (line 4 of set_in_one_branch())
@pipeline_def(batch_size=4, enable_conditionals=True)
def set_in_one_branch(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    if fn.reductions.mean(images) > 100:
        mirrored = fn.flip(images, horizontal=1)
    return mirrored, labels


# dali-migrate: [pipeline-def] pipeline not converted: `print("bright images get a random blur")` inside a branch of an `if` on DALI data: DALI runs it once, when it traces the branch; the converted branch would run it every iteration: convert by hand (line 5 of python_values_in_branches())
# dali-migrate: [pipeline-def] pipeline not converted: `random.uniform(...)` inside a branch of an `if` on DALI data: DALI runs a branch's Python code once, when it traces the branch; the converted branch would run it every iteration: convert by hand (line 6 of python_values_in_branches())
# dali-migrate: [pipeline-def] pipeline not converted: `if fn.reductions.mean(images) > 100:` gives `weight` a value that is not one DALI batch in a branch (DALI would make a Python value a constant batch): convert by hand (line 4 of python_values_in_branches())
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


# dali-migrate: [pipeline-def] pipeline not converted: the condition `random.random() < 0.5` was evaluated when the pipeline was built; the converted loop would evaluate it every iteration: evaluate it once before the loop by hand (line 5 of build_time_coin())
@pipeline_def(batch_size=4, enable_conditionals=True)
def build_time_coin(root, repeats=2):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    for _ in range(repeats):
        if random.random() < 0.5:
            images = fn.rotate(images, angle=90.0)
    return images, labels


# dali-migrate: [pipeline-def] pipeline not converted: `fn.flip(images, horizontal=1) if fn.random.coin_flip() else images`: a conditional expression on DALI data raises in pipeline mode (a DataNode has no truth value); use an `if` statement (line 4 of ternary_on_data())
@pipeline_def(batch_size=4, enable_conditionals=True)
def ternary_on_data(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    images = fn.flip(images, horizontal=1) if fn.random.coin_flip() else images
    return images, labels


# dali-migrate: [pipeline-def] pipeline not converted: enable_conditionals= is not a literal True or False: cannot tell whether `if` on data is per sample; convert by hand
@pipeline_def(batch_size=4, enable_conditionals=USE_CONDITIONALS)
def computed_setting(root):
    jpegs, labels = fn.readers.file(file_root=root)
    return fn.decoders.image(jpegs), labels
