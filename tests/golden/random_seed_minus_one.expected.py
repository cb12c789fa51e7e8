import nvidia.dali.experimental.dynamic as ndd


def noisy_pipe(root, *, batch_size=4, num_threads=1, device_id=None, seed=None):
    ndd.set_num_threads(num_threads)
    rng = ndd.random.RNG(seed=seed)
    reader = ndd.readers.File(file_root=root)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            images = ndd.decoders.image(jpegs)
            images = ndd.noise.gaussian(images, stddev=10.0, batch_size=batch_size, rng=rng)
            yield images, labels


def unseeded_pipe(*, batch_size=4, num_threads=1, device_id=None, seed=None):
    ndd.set_num_threads(num_threads)
    rng = ndd.random.RNG(seed=seed)
    while True:
        yield (ndd.random.uniform(range=(0, 1), shape=(2,), batch_size=batch_size, rng=rng),)


pipe = noisy_pipe("/data")
next(pipe)
