import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec
from nvidia.dali import fn, pipeline_def
from nvidia.dali.plugin.jax import DALIGenericIterator, data_iterator

mesh = Mesh(jax.devices(), axis_names=("batch",))
sharding = NamedSharding(mesh, PartitionSpec("batch"))


# dali-migrate: [not-yet-converted] @data_iterator: not converted; the function is a pipeline definition. Without sharding=/devices=: make it @pipeline_def(num_threads=4, device_id=0) (the decorator's defaults) and pass one pipeline to DALIGenericIterator([pipe], output_map, ...) with the decorator's other arguments, which dali-migrate converts. With sharding=/devices=: one converted generator per device (device_id=i, shard_id=device.id, num_shards=device count, batch_size=global batch // device count) and jax.make_array_from_single_device_arrays per output
@data_iterator(output_map=["images", "labels"], reader_name="Reader", sharding=sharding)
def sharded_iterator(root, shard_id, num_shards):
    jpegs, labels = fn.readers.file(file_root=root, shard_id=shard_id, num_shards=num_shards, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed")
    images = fn.resize(images, resize_x=224, resize_y=224)
    return images, labels.gpu()


# dali-migrate: [pipeline-def] not converted: some uses of this pipeline in this file need a person (see the markers there)
@pipeline_def(batch_size=32, num_threads=4, device_id=0)
def eval_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed")
    images = fn.resize(images, resize_x=224, resize_y=224)
    return images, labels.gpu()


def loaders(root):
    train = sharded_iterator(root, batch_size=256)
    pipe = eval_pipe(root)
    # dali-migrate: [call-site] JAX DALIGenericIterator(sharding=...): not converted (the original builds a global array over the sharding's devices); iterate the converted generator, convert each output with jax.dlpack.from_dlpack(ndd.as_tensor(batch)) and build it with jax.make_array_from_single_device_arrays, keeping the epoch length / last-batch policy by hand
    # dali-migrate: [not-yet-converted] JAX iterator not converted (its pipeline, eval_pipe, is not converted: its marker says why): iterate the converted generator, make each batch {name: jax.dlpack.from_dlpack(ndd.as_tensor(batch))} and keep the iterator's epoch length and last-batch policy (FILL/DROP) by hand; over several devices, one converted generator per device (shard_id=, num_shards=) and jax.make_array_from_single_device_arrays
    evaluation = DALIGenericIterator([pipe], ["images", "labels"], reader_name="Reader", sharding=sharding)
    return train, evaluation
