# golden-verify: pipe=augment_pipe args=(str(DATA / "images"),) iterations=5
import secrets
from nvidia.dali import types
import nvidia.dali.experimental.dynamic as ndd


def augment_pipe(root, *, batch_size=8, num_threads=2, device_id=None, seed=1234):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng = ndd.random.RNG(seed=seed_or_random)
    reader = ndd.readers.File(file_root=root, random_shuffle=True, initial_fill=64, seed=seed_or_random)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, output_type=types.RGB)
                angle = ndd.random.uniform(range=(-15.0, 15.0), batch_size=batch_size, rng=rng)
                images = ndd.rotate(images, angle=angle, fill_value=0)
                mirror = ndd.random.coin_flip(probability=0.5, batch_size=batch_size, rng=rng)
                brightness = ndd.random.normal(mean=1.0, stddev=0.1, batch_size=batch_size, rng=rng)
                images = ndd.brightness(images, brightness=brightness)
                images = ndd.flip(images, horizontal=mirror)
                outputs = images, labels
            yield outputs
