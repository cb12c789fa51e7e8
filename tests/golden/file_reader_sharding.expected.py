# golden-run: pipe=sharded_pipe args=(str(DATA / "images"), 1, 2) kwargs={"batch_size": 4} iterations=8
import nvidia.dali.experimental.dynamic as ndd


def sharded_pipe(data_dir, shard_id, num_shards, *, batch_size, num_threads=None, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(
        file_root=data_dir,
        shard_id=shard_id,
        num_shards=num_shards,
        stick_to_shard=True,
        pad_last_batch=True,
    )
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs)
                images = ndd.resize(images, size=24)
                outputs = images, labels
            yield outputs


def run_shard(rank, world_size, steps):
    pipe = sharded_pipe("/data", rank, world_size, batch_size=16, num_threads=4, device_id=rank)
    shard_size = ndd.readers.File(
        file_root="/data",
        shard_id=rank,
        num_shards=world_size,
        stick_to_shard=True,
        pad_last_batch=True,
    ).get_metadata()["epoch_size_padded"]
    for _ in range(steps):
        images, labels = next(pipe)
    return shard_size
