import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


def ImagePipeline(data_dir, batch_size, num_threads, device_id, shard_id=0, num_shards=1, *, seed=12):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=data_dir, shard_id=shard_id, num_shards=num_shards, pad_last_batch=True)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                images = ndd.resize(images, device="gpu", resize_x=32, resize_y=32)
                outputs = images, labels.gpu()
            yield outputs
