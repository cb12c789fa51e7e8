# golden-verify: pipe=params_pipe iterations=3
import secrets
import nvidia.dali.experimental.dynamic as ndd


def params_pipe(*, batch_size=4, num_threads=1, device_id=None, seed=3):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng = ndd.random.RNG(seed=seed_or_random)
    while True:
        with ctx:
            x = ndd.random.uniform(range=[0.0, 1.0], shape=[3], batch_size=batch_size, rng=rng)
            y = ndd.random.uniform(values=[1, 2, 3], batch_size=batch_size, rng=rng)
            outputs = x, y
        yield outputs
