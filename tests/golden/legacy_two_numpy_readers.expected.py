# golden-verify: pipe=TrainPipeline kwargs={"batch_size": 2, "num_threads": 2, "device_id": None, "imgs": [str(DATA / "numpy_pairs" / f"data-{k:02d}.npy") for k in range(6)], "lbls": [str(DATA / "numpy_pairs" / f"label-{k:02d}.npy") for k in range(6)], "seed": 12} iterations=10
# golden-run: pipe=EvalPipeline kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "imgs": [str(DATA / "numpy_pairs" / f"data-{k:02d}.npy") for k in range(6)], "lbls": [str(DATA / "numpy_pairs" / f"label-{k:02d}.npy") for k in range(6)], "seed": 12} iterations=7
"""Segmentation data as NVIDIA's nnU-Net loads it: images and labels are .npy files, each read by an
ops.readers.Numpy of the same settings that a Pipeline subclass makes in __init__."""
import secrets
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


def TrainPipeline(batch_size, num_threads, device_id, imgs, lbls, seed, gpus=1):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng = ndd.random.RNG(seed=seed_or_random)
    reader_seed = seed
    shuffle = True
    device = device_id
    reader = ndd.readers.Numpy(files=imgs, device="cpu", read_ahead=True, dont_use_mmap=True, pad_last_batch=True, shard_id=device or 0, seed=reader_seed if reader_seed is not None else seed_or_random, num_shards=gpus, shuffle_after_epoch=shuffle)
    reader_2 = ndd.readers.Numpy(files=lbls, device="cpu", read_ahead=True, dont_use_mmap=True, pad_last_batch=True, shard_id=device or 0, seed=reader_seed if reader_seed is not None else seed_or_random ^ 1, num_shards=gpus, shuffle_after_epoch=shuffle)

    # one batch of each reader per iteration, each going on into its next epoch on its own, as in a pipeline
    def endless(reader):
        while True:
            yield from reader.next_epoch(batch_size=batch_size)

    for (img_2,), (lbl_2,) in zip(endless(reader), endless(reader_2)):
        with ctx:
            img_2 = ndd.reshape(img_2, layout="HWC")
            lbl_2 = ndd.reshape(lbl_2, layout="HW")
            img, lbl = img_2, lbl_2
            augmented = ndd.random.uniform(range=(0.7, 1.3), batch_size=batch_size, rng=rng)
            condition = ndd.cast(ndd.random.coin_flip(probability=0.15, batch_size=batch_size, rng=rng), dtype=types.DALIDataType.BOOL)
            neg_condition = condition ^ True
            brightness_scale = condition * augmented + neg_condition * 1.0
            img = img * brightness_scale
            outputs = img, lbl
        yield outputs


def EvalPipeline(batch_size, num_threads, device_id, imgs, lbls, seed, gpus=1):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    reader_seed = seed
    shuffle = False
    device = device_id
    reader = ndd.readers.Numpy(files=imgs, device="cpu", read_ahead=True, dont_use_mmap=True, pad_last_batch=True, shard_id=device or 0, seed=reader_seed if reader_seed is not None else seed_or_random, num_shards=gpus, shuffle_after_epoch=shuffle)
    reader_2 = ndd.readers.Numpy(files=lbls, device="cpu", read_ahead=True, dont_use_mmap=True, pad_last_batch=True, shard_id=device or 0, seed=reader_seed if reader_seed is not None else seed_or_random ^ 1, num_shards=gpus, shuffle_after_epoch=shuffle)

    # one batch of each reader per iteration, each going on into its next epoch on its own, as in a pipeline
    def endless(reader):
        while True:
            yield from reader.next_epoch(batch_size=batch_size)

    for (img_2,), (lbl_2,) in zip(endless(reader), endless(reader_2)):
        with ctx:
            img_2 = ndd.reshape(img_2, layout="HWC")
            lbl_2 = ndd.reshape(lbl_2, layout="HW")
            img, lbl = img_2, lbl_2
            outputs = img, lbl
        yield outputs
