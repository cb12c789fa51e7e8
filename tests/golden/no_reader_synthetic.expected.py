# golden-verify: pipe=synthetic_pipe iterations=3
import secrets
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


def synthetic_pipe(height=32, width=32, *, batch_size=16, num_threads=2, device_id=0, seed=0):
    """Random images for benchmarking: no reader."""
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng = ndd.random.RNG(seed=seed_or_random)
    while True:
        with ctx:
            images = ndd.random.normal(shape=(height, width, 3), dtype=types.FLOAT, batch_size=batch_size, rng=rng)
            labels = ndd.random.uniform(range=(0, 10), dtype=types.INT32, shape=(1,), batch_size=batch_size, rng=rng)
            outputs = images.gpu(), labels.gpu()
        yield outputs


pipe = synthetic_pipe(height=64, width=64)
for step in range(100):
    images, labels = next(pipe)
