# golden-verify: pipe=MXNetReaderPipeline kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "db_folder": str(DATA / "recordio") + "/"} iterations=7
"""The pattern of DALI's "various readers" notebooks: a base class makes the augmentations and
builds the graph in base_define_graph(); each reader's subclass adds its reader and hands its
outputs to base_define_graph() from define_graph()."""
import secrets
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


def MXNetReaderPipeline(batch_size, num_threads, device_id, db_folder, shard_id=0, num_gpus=1, *, seed=12):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng_2 = ndd.random.RNG(seed=seed_or_random)
    reader = ndd.readers.MXNet(path=[db_folder + "train.rec"], index_path=[db_folder + "train.idx"], random_shuffle=True, shard_id=shard_id, num_shards=num_gpus, seed=seed_or_random)
    while True:
        for images, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                rng = ndd.random.coin_flip(probability=0.5, batch_size=batch_size, rng=rng_2)
                images = ndd.decoders.image(images, device="gpu", output_type=types.RGB)
                images = ndd.random_resized_crop(images, device="gpu", size=(32, 32), batch_size=batch_size, rng=rng_2)
                output = ndd.crop_mirror_normalize(images.gpu(), mirror=rng, crop_pos_x=ndd.random.uniform(range=(0.0, 1.0), batch_size=batch_size, rng=rng_2), crop_pos_y=ndd.random.uniform(range=(0.0, 1.0), batch_size=batch_size, rng=rng_2), device="gpu", dtype=types.FLOAT, output_layout=types.NCHW, crop=(24, 24), mean=[0.485 * 255, 0.456 * 255, 0.406 * 255], std=[0.229 * 255, 0.224 * 255, 0.225 * 255])
                outputs = (output, labels)
            yield outputs


def CaffeReadPipeline(batch_size, num_threads, device_id, lmdb_folder, shard_id=0, num_gpus=1, *, seed=12):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng_2 = ndd.random.RNG(seed=seed_or_random)
    reader = ndd.readers.Caffe(path=lmdb_folder, random_shuffle=True, shard_id=shard_id, num_shards=num_gpus, seed=seed_or_random)
    while True:
        for images, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                rng = ndd.random.coin_flip(probability=0.5, batch_size=batch_size, rng=rng_2)
                images = ndd.decoders.image(images, device="gpu", output_type=types.RGB)
                images = ndd.random_resized_crop(images, device="gpu", size=(32, 32), batch_size=batch_size, rng=rng_2)
                output = ndd.crop_mirror_normalize(images.gpu(), mirror=rng, crop_pos_x=ndd.random.uniform(range=(0.0, 1.0), batch_size=batch_size, rng=rng_2), crop_pos_y=ndd.random.uniform(range=(0.0, 1.0), batch_size=batch_size, rng=rng_2), device="gpu", dtype=types.FLOAT, output_layout=types.NCHW, crop=(24, 24), mean=[0.485 * 255, 0.456 * 255, 0.406 * 255], std=[0.229 * 255, 0.224 * 255, 0.225 * 255])
                outputs = (output, labels)
            yield outputs


def FileReadPipeline(batch_size, num_threads, device_id, image_dir, *, seed=12):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng_2 = ndd.random.RNG(seed=seed_or_random)
    reader = ndd.readers.File(file_root=image_dir)
    while True:
        for images, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                rng = ndd.random.coin_flip(probability=0.5, batch_size=batch_size, rng=rng_2)
                images = ndd.decoders.image(images, device="gpu", output_type=types.RGB)
                images = ndd.random_resized_crop(images, device="gpu", size=(32, 32), batch_size=batch_size, rng=rng_2)
                output = ndd.crop_mirror_normalize(images.gpu(), mirror=rng, crop_pos_x=ndd.random.uniform(range=(0.0, 1.0), batch_size=batch_size, rng=rng_2), crop_pos_y=ndd.random.uniform(range=(0.0, 1.0), batch_size=batch_size, rng=rng_2), device="gpu", dtype=types.FLOAT, output_layout=types.NCHW, crop=(24, 24), mean=[0.485 * 255, 0.456 * 255, 0.406 * 255], std=[0.229 * 255, 0.224 * 255, 0.225 * 255])
                outputs = (output, labels)
            yield outputs


if __name__ == "__main__":
    rec_pipe = MXNetReaderPipeline(batch_size=8, num_threads=2, device_id=0, db_folder="db/recordio/")
    lmdb_pipe = CaffeReadPipeline(batch_size=8, num_threads=2, device_id=0, lmdb_folder="db/lmdb")
    file_pipe = FileReadPipeline(batch_size=8, num_threads=2, device_id=0, image_dir="images")
    for step in range(4):
        images, labels = next(rec_pipe)
        images, labels = next(lmdb_pipe)
        images, labels = next(file_pipe)
