"""Pipeline.current() kept as an object, or read where the pipeline binds the setting's name itself:
left as written."""
from nvidia.dali import Pipeline, fn, pipeline_def


@pipeline_def(num_threads=2, device_id=0, batch_size=4)
def kept_object(root):
    pipe = Pipeline.current()
    jpegs, labels = fn.readers.file(file_root=root, shard_id=pipe.device_id, num_shards=2)
    return jpegs, labels


@pipeline_def(num_threads=2, device_id=0, batch_size=4)
def own_device_id(root, device_id_offset):
    device_id = device_id_offset + 1
    jpegs, labels = fn.readers.file(file_root=root, shard_id=Pipeline.current().device_id, num_shards=2)
    return jpegs, labels
