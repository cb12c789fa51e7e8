# golden-run: pipe=mnist_sharded_pipeline args=(str(DATA / "caffe2_lmdb"), False, 2, 1) kwargs={"batch_size": 3} iterations=6
"""One DALI pipeline per JAX device, as DALI's multi-GPU JAX and Flax notebooks make them: a loop
fills a list (each pipeline's device read back and printed), one iterator over the list gives
arrays with a leading device axis for jax.pmap; validation runs on one device."""
import os

import jax
from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali.plugin import jax as dax

training_data_path = os.path.join(os.environ["DALI_EXTRA_PATH"], "db/MNIST/training/")
validation_data_path = os.path.join(os.environ["DALI_EXTRA_PATH"], "db/MNIST/testing/")

BATCH_SIZE_PER_GPU = 100
IMAGE_SIZE = 28


@pipeline_def(batch_size=BATCH_SIZE_PER_GPU, num_threads=4, seed=0)
def mnist_sharded_pipeline(data_path, random_shuffle, num_shards, shard_id):
    jpegs, labels = fn.readers.caffe2(
        path=data_path,
        random_shuffle=random_shuffle,
        name="mnist_caffe2_reader",
        num_shards=num_shards,
        shard_id=shard_id)
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.GRAY)
    images = fn.resize(images, resize_x=IMAGE_SIZE, resize_y=IMAGE_SIZE)
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, std=[255.0], output_layout="CHW")
    images = fn.reshape(images, shape=[-1])  # Flatten the output image
    labels = labels.gpu()
    if random_shuffle:
        labels = fn.one_hot(labels, num_classes=10)
    return images, labels


pipelines = []
for id, device in enumerate(jax.devices()):
    pipeline = mnist_sharded_pipeline(
        data_path=training_data_path, random_shuffle=True, num_shards=jax.device_count(), shard_id=id, device_id=id)
    print(f"Pipeline {pipeline} working on device {pipeline.device_id}")
    pipelines.append(pipeline)

training_iterator = dax.DALIGenericIterator(
    pipelines,
    output_map=["images", "labels"],
    reader_name="mnist_caffe2_reader",
    auto_reset=True)
print(f"Number of batches in training iterator = {len(training_iterator)}")

validation_pipeline = mnist_sharded_pipeline(
    data_path=validation_data_path, random_shuffle=False, num_shards=1, shard_id=0, device_id=0)
validation_iterator = dax.DALIGenericIterator(
    validation_pipeline,
    output_map=["images", "labels"],
    reader_name="mnist_caffe2_reader",
    auto_reset=True)


@jax.pmap
def mean_image(images):
    return images.mean(axis=0)


for epoch in range(10):
    for it, batch in enumerate(training_iterator):
        means = mean_image(batch["images"])
    for batch in validation_iterator:
        print(batch["labels"].shape)
