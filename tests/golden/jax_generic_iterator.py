import jax
import jax.numpy as jnp
from nvidia.dali import fn, pipeline_def, types
from nvidia.dali.plugin.base_iterator import LastBatchPolicy
from nvidia.dali.plugin.jax import DALIGenericIterator


@pipeline_def(batch_size=64, num_threads=4, device_id=0, seed=0)
def mnist_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.GRAY)
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, std=[255.0], output_layout="CHW")
    images = fn.reshape(images, shape=[-1])
    labels = labels.gpu()
    labels = fn.one_hot(labels, num_classes=10)
    return images, labels


def train_epoch(params, update, root):
    pipe = mnist_pipe(root)
    loader = DALIGenericIterator(
        [pipe],
        ["images", "labels"],
        reader_name="Reader",
        last_batch_policy=LastBatchPolicy.DROP,
        auto_reset=True,
    )
    for batch in loader:
        params = update(params, batch["images"], batch["labels"])
    return params, len(loader)
