import numpy as np
from nvidia.dali import fn, pipeline_def, types

IMAGE_SIZE = 32


# dali-migrate: [pipeline-def] not converted: some uses of this pipeline in this file need a person (see the markers there)
@pipeline_def(num_threads=2, seed=99)
def train_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="TrainReader")
    images = fn.decoders.image_random_crop(jpegs, output_type=types.RGB)
    images = fn.resize(images, resize_x=IMAGE_SIZE, resize_y=IMAGE_SIZE)
    mirror = fn.random.coin_flip()
    images = fn.crop_mirror_normalize(images, mirror=mirror, dtype=types.FLOAT)
    return images, labels


# dali-migrate: [pipeline-def] not converted: some uses of this pipeline in this file need a person (see the markers there)
@pipeline_def(num_threads=2)
def val_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=False, name="ValReader")
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    images = fn.resize(images, resize_shorter=IMAGE_SIZE)
    images = fn.crop_mirror_normalize(images, crop=(IMAGE_SIZE, IMAGE_SIZE), dtype=types.FLOAT)
    return images, labels


def loaders(root, batch_size):
    train = train_pipe(root, batch_size=batch_size, device_id=0)
    val = val_pipe(root, batch_size=batch_size, device_id=0)
    train.build()
    val.build()
    train_size = train.epoch_size("TrainReader")
    val_size = val.epoch_size("ValReader")
    # dali-migrate: [call-site] the pipeline object `train` is used by `return train, val, train_size, val_size` in a way dali-migrate cannot follow (e.g. passed to an iterator); convert by hand
    # dali-migrate: [call-site] the pipeline object `val` is used by `return train, val, train_size, val_size` in a way dali-migrate cannot follow (e.g. passed to an iterator); convert by hand
    return train, val, train_size, val_size


def evaluate(val, steps):
    correct = 0
    for _ in range(steps):
        images, labels = val.run()
        correct += int(np.sum(labels.as_array() == 0))
    return correct
