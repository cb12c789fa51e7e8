import nvidia.dali.experimental.dynamic as ndd


def params_pipe(*, batch_size=4, num_threads=1, device_id=None, seed=3):
    ndd.set_num_threads(num_threads)
    rng = ndd.random.RNG(seed=seed)
    while True:
        x = ndd.random.uniform(range=[0.0, 1.0], shape=[3], batch_size=batch_size, rng=rng)
        y = ndd.random.uniform(values=[1, 2, 3], batch_size=batch_size, rng=rng)
        yield x, y
