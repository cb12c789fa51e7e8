# The reader comes from a function of another module (a plugin's reader wrapped by the project,
# as database-backed loaders do): dali-migrate cannot see that it makes DALI operators, which the
# pipeline runs every iteration. The file-reader pipeline beside it converts.
from nvidia.dali import pipeline_def, fn, types

from loaders.db_reader import make_db_reader


@pipeline_def(batch_size=32, num_threads=4, device_id=0)
def db_train_pipe(table, shard_id=0, num_shards=1):
    db_reader = make_db_reader(table=table, shard_id=shard_id, num_shards=num_shards, prefetch_buffers=2)
    jpegs, labels = db_reader
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, resize_x=64, resize_y=64)
    return images, labels.gpu()


@pipeline_def(batch_size=32, num_threads=4, device_id=0)
def file_train_pipe(root, shard_id=0, num_shards=1):
    jpegs, labels = fn.readers.file(file_root=root, shard_id=shard_id, num_shards=num_shards, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, resize_x=64, resize_y=64)
    return images, labels.gpu()


if __name__ == "__main__":
    pipe = file_train_pipe("/data/train")
    pipe.build()
    for step in range(10):
        images, labels = pipe.run()
