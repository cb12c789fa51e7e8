# golden-run: pipe=eval_pipeline args=(str(DATA / "images"),) kwargs=dict(batch_size=4) iterations=8
# golden-verify: pipe=train_pipeline args=(str(DATA / "images"),) kwargs=dict(batch_size=4) iterations=8
"""Augmentations in functions called inside the returned tuple, as DALI's webdataset notebook
writes them (`return decode_augment(img, seed=seed), label`)."""
import secrets
import nvidia.dali.experimental.dynamic as ndd


def train_pipeline(root, *, batch_size=4, num_threads=2, device_id=0, seed=7):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng = ndd.random.RNG(seed=seed_or_random)
    rng_uniform = ndd.random.RNG(seed=42)
    reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=seed_or_random)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                img = jpegs
                img = ndd.decoders.image(img, device="gpu")
                img = ndd.rotate(img, angle=ndd.random.uniform(range=(-10.0, 10.0), batch_size=batch_size, rng=rng_uniform), fill_value=0)
                img = ndd.resize(img, size=(64, 64))
                images = img
                # two views of each image, each flipped at random on its own
                mirror = ndd.random.coin_flip(probability=0.5, batch_size=batch_size, rng=rng)
                random_flip_result = ndd.flip(images, horizontal=mirror)
                mirror = ndd.random.coin_flip(probability=0.5, batch_size=batch_size, rng=rng)
                outputs = random_flip_result, ndd.flip(images, horizontal=mirror), labels.gpu()
            yield outputs


def eval_pipeline(root, *, batch_size=4, num_threads=2, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=root)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                img = jpegs
                img = ndd.decoders.image(img, device="gpu")
                outputs = ndd.resize(img, size=(48, 48)), labels
            yield outputs
