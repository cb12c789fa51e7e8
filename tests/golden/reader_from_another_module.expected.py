# The reader comes from a function of another module (a plugin's reader wrapped by the project,
# as database-backed loaders do): dali-migrate cannot see that it makes DALI operators, which the
# pipeline runs every iteration. The file-reader pipeline beside it converts.
from nvidia.dali import pipeline_def, fn, types
import nvidia.dali.experimental.dynamic as ndd

from loaders.db_reader import make_db_reader


# dali-migrate: [pipeline-def] pipeline not converted: `jpegs`, which comes from `make_db_reader(table=table, shard_id=shard_id, num_shards...` that dali-migrate cannot see into, is DALI data here (`fn.decoders.image(jpegs, device="mixed", output_type=type...`): if it makes DALI operators (a reader of another module, a plugin's), the pipeline ran them every iteration, while the converted loop would reuse the one result it got before the loop; convert by hand
@pipeline_def(batch_size=32, num_threads=4, device_id=0)
def db_train_pipe(table, shard_id=0, num_shards=1):
    db_reader = make_db_reader(table=table, shard_id=shard_id, num_shards=num_shards, prefetch_buffers=2)
    jpegs, labels = db_reader
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, resize_x=64, resize_y=64)
    return images, labels.gpu()


def file_train_pipe(root, shard_id=0, num_shards=1, *, batch_size=32, num_threads=4, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=root, shard_id=shard_id, num_shards=num_shards)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                images = ndd.resize(images, resize_x=64, resize_y=64)
                outputs = images, labels.gpu()
            yield outputs


if __name__ == "__main__":
    pipe = file_train_pipe("/data/train")
    for step in range(10):
        images, labels = next(pipe)
