# golden-run: pipe=val_pipe args=(str(DATA / "images"),) kwargs={"batch_size": 5} iterations=10
import numpy as np
import secrets
from nvidia.dali import types
import nvidia.dali.experimental.dynamic as ndd

IMAGE_SIZE = 32


def train_pipe(root, *, batch_size, num_threads=2, device_id=None, seed=99):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng = ndd.random.RNG(seed=seed_or_random)
    reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=seed_or_random)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image_random_crop(jpegs, output_type=types.RGB, batch_size=batch_size, rng=rng)
                images = ndd.resize(images, resize_x=IMAGE_SIZE, resize_y=IMAGE_SIZE)
                mirror = ndd.random.coin_flip(batch_size=batch_size, rng=rng)
                images = ndd.crop_mirror_normalize(images, mirror=mirror, dtype=types.FLOAT)
                outputs = images, labels
            yield outputs


def val_pipe(root, *, batch_size, num_threads=2, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=root, random_shuffle=False)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, output_type=types.RGB)
                images = ndd.resize(images, resize_shorter=IMAGE_SIZE)
                images = ndd.crop_mirror_normalize(images, crop=(IMAGE_SIZE, IMAGE_SIZE), dtype=types.FLOAT)
                outputs = images, labels
            yield outputs


def run(root, batch_size, epochs):
    train = train_pipe(root, batch_size=batch_size, device_id=0)
    val = val_pipe(root, batch_size=batch_size, device_id=0)
    train_steps = ndd.readers.File(file_root=root).get_metadata()["epoch_size_padded"] // batch_size
    val_steps = ndd.readers.File(file_root=root).get_metadata()["epoch_size_padded"] // batch_size
    for epoch in range(epochs):
        for _ in range(train_steps):
            images, labels = next(train)
        correct = 0
        for _ in range(val_steps):
            images, labels = next(val)
            correct += int(np.sum(np.array(ndd.as_tensor(labels)) == 0))
        print(epoch, correct)
