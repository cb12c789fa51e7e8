# golden-run: pipe=sharded_pipe args=(str(DATA / "images"), 1, 2) kwargs={"batch_size": 4} iterations=8
from nvidia.dali import fn, pipeline_def


@pipeline_def
def sharded_pipe(data_dir, shard_id, num_shards):
    jpegs, labels = fn.readers.file(
        file_root=data_dir,
        shard_id=shard_id,
        num_shards=num_shards,
        stick_to_shard=True,
        pad_last_batch=True,
        name="Reader",
    )
    images = fn.decoders.image(jpegs)
    images = fn.resize(images, size=24)
    return images, labels


def run_shard(rank, world_size, steps):
    pipe = sharded_pipe("/data", rank, world_size, batch_size=16, num_threads=4, device_id=rank)
    pipe.build()
    shard_size = pipe.epoch_size("Reader")
    for _ in range(steps):
        images, labels = pipe.run()
    return shard_size
