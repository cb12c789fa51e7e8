# golden-verify: pipe=noisy_pipe args=(str(DATA / "images"),) iterations=7
import secrets
import nvidia.dali.experimental.dynamic as ndd


def noisy_pipe(root, *, batch_size=4, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng = ndd.random.RNG(seed=seed_or_random)
    reader = ndd.readers.File(file_root=root)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs)
                images = ndd.noise.gaussian(images, stddev=10.0, batch_size=batch_size, rng=rng)
                outputs = images, labels
            yield outputs


def unseeded_pipe(*, batch_size=4, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng = ndd.random.RNG(seed=seed_or_random)
    while True:
        with ctx:
            outputs = (ndd.random.uniform(range=(0, 1), shape=(2,), batch_size=batch_size, rng=rng),)
        yield outputs


pipe = noisy_pipe("/data")
next(pipe)
