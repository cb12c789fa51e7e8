# golden-verify: pipe=jitter_pipe args=(str(DATA / "images"),) iterations=7
import nvidia.dali.experimental.dynamic as ndd


def jitter_pipe(root, *, batch_size=4, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    rng_uniform = ndd.random.RNG(seed=42)
    rng_coin_flip = ndd.random.RNG(seed=43)
    reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=7)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs)
                scale = ndd.random.uniform(range=(0.8, 1.2), batch_size=batch_size, rng=rng_uniform)
                flip = ndd.random.coin_flip(batch_size=batch_size, rng=rng_coin_flip)
                images = ndd.resize(images, resize_x=scale * 32, resize_y=32)
                images = ndd.flip(images, horizontal=flip)
                outputs = images, labels
            yield outputs
