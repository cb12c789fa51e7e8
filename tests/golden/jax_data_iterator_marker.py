import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec
from nvidia.dali import fn, pipeline_def
from nvidia.dali.plugin.jax import DALIGenericIterator, data_iterator

mesh = Mesh(jax.devices(), axis_names=("batch",))
sharding = NamedSharding(mesh, PartitionSpec("batch"))


@data_iterator(output_map=["images", "labels"], reader_name="Reader", sharding=sharding)
def sharded_iterator(root, shard_id, num_shards):
    jpegs, labels = fn.readers.file(file_root=root, shard_id=shard_id, num_shards=num_shards, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed")
    images = fn.resize(images, resize_x=224, resize_y=224)
    return images, labels.gpu()


@pipeline_def(batch_size=32, num_threads=4, device_id=0)
def eval_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed")
    images = fn.resize(images, resize_x=224, resize_y=224)
    return images, labels.gpu()


def loaders(root):
    train = sharded_iterator(root, batch_size=256)
    pipe = eval_pipe(root)
    evaluation = DALIGenericIterator([pipe], ["images", "labels"], reader_name="Reader", sharding=sharding)
    return train, evaluation
