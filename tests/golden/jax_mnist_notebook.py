# golden-run: pipe=mnist_pipeline args=(str(DATA / "caffe2_lmdb"), False) kwargs={"batch_size": 3} iterations=6
"""JAX training over DALI as DALI's JAX notebook writes it (its cells one after another): the
pipelines and an iterator printed, the iterators' size read, the validation iterator handed to a
function that iterates it, JAX imported only in the cell below the one that makes the iterators."""
import os

training_data_path = os.path.join(os.environ["DALI_EXTRA_PATH"], "db/MNIST/training/")
validation_data_path = os.path.join(os.environ["DALI_EXTRA_PATH"], "db/MNIST/testing/")

from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn
import nvidia.dali.types as types

batch_size = 100
image_size = 28
num_classes = 10


@pipeline_def(device_id=0, batch_size=batch_size, num_threads=4)
def mnist_pipeline(data_path, random_shuffle):
    jpegs, labels = fn.readers.caffe2(path=data_path, random_shuffle=random_shuffle, name="mnist_caffe2_reader")
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.GRAY)
    images = fn.resize(images, resize_x=image_size, resize_y=image_size)
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, std=[255.0], output_layout="CHW")
    images = fn.reshape(images, shape=[image_size * image_size])

    labels = labels.gpu()

    if random_shuffle:
        labels = fn.one_hot(labels, num_classes=num_classes)

    return images, labels


print("Creating pipelines")
training_pipeline = mnist_pipeline(data_path=training_data_path, random_shuffle=True)
validation_pipeline = mnist_pipeline(data_path=validation_data_path, random_shuffle=False)
training_pipeline.build()
validation_pipeline.build()
print(training_pipeline)
print(validation_pipeline)

from nvidia.dali.plugin import jax as dax

training_iterator = dax.DALIGenericIterator(
    training_pipeline,
    output_map=["images", "labels"],
    reader_name="mnist_caffe2_reader",
    auto_reset=True)
validation_iterator = dax.DALIGenericIterator(
    validation_pipeline,
    output_map=["images", "labels"],
    reader_name="mnist_caffe2_reader",
    auto_reset=True)
print(training_iterator)
print(f"Training iterator size = {training_iterator.size}")
print(f"Validation iterator size = {validation_iterator.size}")

import jax
import jax.numpy as jnp


def predict(params, images):
    w, b = params
    return images @ w + b


@jax.jit
def update(params, batch, step_size):
    def loss(p):
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(predict(p, batch["images"])) * batch["labels"], axis=1))

    return [p - step_size * g for p, g in zip(params, jax.grad(loss)(params))]


def accuracy(params, iterator):
    correct = 0
    for batch in iterator:
        correct = correct + jnp.sum(jnp.argmax(predict(params, batch["images"]), axis=1) == batch["labels"].ravel())
    return correct / iterator.size


params = [jnp.zeros((image_size * image_size, num_classes)), jnp.zeros(num_classes)]
for epoch in range(10):
    for batch in training_iterator:
        params = update(params, batch, 0.001)
    test_acc = accuracy(params, validation_iterator)
    print(f"Epoch {epoch}: test set accuracy {test_acc}")
