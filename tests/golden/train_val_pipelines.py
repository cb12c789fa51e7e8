# golden-run: pipe=val_pipe args=(str(DATA / "images"),) kwargs={"batch_size": 5} iterations=10
import numpy as np
from nvidia.dali import fn, pipeline_def, types

IMAGE_SIZE = 32


@pipeline_def(num_threads=2, seed=99)
def train_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="TrainReader")
    images = fn.decoders.image_random_crop(jpegs, output_type=types.RGB)
    images = fn.resize(images, resize_x=IMAGE_SIZE, resize_y=IMAGE_SIZE)
    mirror = fn.random.coin_flip()
    images = fn.crop_mirror_normalize(images, mirror=mirror, dtype=types.FLOAT)
    return images, labels


@pipeline_def(num_threads=2)
def val_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=False, name="ValReader")
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    images = fn.resize(images, resize_shorter=IMAGE_SIZE)
    images = fn.crop_mirror_normalize(images, crop=(IMAGE_SIZE, IMAGE_SIZE), dtype=types.FLOAT)
    return images, labels


def run(root, batch_size, epochs):
    train = train_pipe(root, batch_size=batch_size, device_id=0)
    val = val_pipe(root, batch_size=batch_size, device_id=0)
    train.build()
    val.build()
    train_steps = train.epoch_size("TrainReader") // batch_size
    val_steps = val.epoch_size("ValReader") // batch_size
    for epoch in range(epochs):
        for _ in range(train_steps):
            images, labels = train.run()
        correct = 0
        for _ in range(val_steps):
            images, labels = val.run()
            correct += int(np.sum(labels.as_array() == 0))
        print(epoch, correct)
