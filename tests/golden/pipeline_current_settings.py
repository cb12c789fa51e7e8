# golden-run: pipe=sized args=(str(DATA / "images"),) kwargs=dict(batch_size=4) iterations=6
# golden-run: pipe=sized args=(str(DATA / "images"),) kwargs=dict(batch_size=3) iterations=8
# golden-verify: pipe=sharded args=(str(DATA / "images"), 2) kwargs=dict(device_id=0) device=gpu iterations=6
"""Pipeline.current() read while the graph is defined, as DALI's multi-GPU examples shard readers."""
from nvidia.dali import Pipeline, fn, pipeline_def
from nvidia.dali.plugin.pytorch import DALIGenericIterator

N_GPUS = 2


@pipeline_def(num_threads=2, device_id=0)
def sized(root):
    jpegs, labels = fn.readers.file(file_root=root, name="Reader")
    side = Pipeline.current().max_batch_size * 4
    images = fn.resize(fn.decoders.image(jpegs, device="mixed"), size=(side, side))
    return images, labels


@pipeline_def(num_threads=2, batch_size=4, seed=11)
def sharded(root, num_gpus):
    jpegs, labels = fn.readers.file(
        file_root=root, shard_id=Pipeline.current().device_id, num_shards=num_gpus, name="Reader"
    )
    images = fn.decoders.image(jpegs, device="mixed")
    return fn.resize(images, size=(8, 8)), labels


def loader(root):
    pipes = [sharded(root, N_GPUS, device_id=i) for i in range(N_GPUS)]
    return DALIGenericIterator(pipes, ["data", "label"], reader_name="Reader")


@pipeline_def(num_threads=2, batch_size=4)
def sharded_by_name(root, num_gpus):
    device_id = Pipeline.current().device_id  # (the setting under its own name)
    jpegs, labels = fn.readers.file(file_root=root, shard_id=device_id, num_shards=num_gpus)
    return fn.decoders.image(jpegs, device="mixed"), labels


def first_batch(root, gpu):
    pipe = sharded_by_name(root, N_GPUS, device_id=gpu)
    pipe.build()
    return pipe.run()
