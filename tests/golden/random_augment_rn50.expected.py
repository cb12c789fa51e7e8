# golden-verify: pipe=rn50_train args=(str(DATA / "images"),) kwargs={"crop": 32, "batch_size": 8} iterations=4
"""ResNet-50 style training augmentation."""
import secrets
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


def rn50_train(data_dir, crop=224, shard_id=0, num_shards=1, *, batch_size=64, num_threads=8, device_id=0, seed=42):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng = ndd.random.RNG(seed=seed_or_random)
    reader = ndd.readers.File(
        file_root=data_dir,
        shard_id=shard_id,
        num_shards=num_shards,
        random_shuffle=True,
        pad_last_batch=True,
        seed=seed_or_random,
    )
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image_random_crop(jpegs, device="gpu", output_type=types.RGB, random_area=[0.1, 1.0], batch_size=batch_size, rng=rng)
                images = ndd.resize(images, device="gpu", resize_x=crop, resize_y=crop)
                angle = ndd.random.uniform(range=(-10.0, 10.0), batch_size=batch_size, rng=rng)
                images = ndd.rotate(images, angle=angle, keep_size=True)
                images = ndd.noise.gaussian(images, stddev=2.0, batch_size=batch_size, rng=rng)
                mirror = ndd.random.coin_flip(probability=0.5, batch_size=batch_size, rng=rng)
                images = ndd.crop_mirror_normalize(
                    images,
                    dtype=types.FLOAT,
                    output_layout="CHW",
                    crop=(crop, crop),
                    mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                    std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
                    mirror=mirror,
                )
                outputs = images, labels.gpu()
            yield outputs


def rn50_train_rrc(data_dir, *, batch_size=64, num_threads=8, device_id=0, seed=42):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng = ndd.random.RNG(seed=seed_or_random)
    reader = ndd.readers.File(file_root=data_dir, random_shuffle=True, seed=seed_or_random)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="gpu")
                images = ndd.random_resized_crop(images, size=(224, 224), random_area=(0.08, 1.0), batch_size=batch_size, rng=rng)
                outputs = images, labels
            yield outputs
