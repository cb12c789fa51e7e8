import tensorflow as tf
import nvidia.dali.plugin.tf as dali_tf
from nvidia.dali import fn, pipeline_def, types


@pipeline_def(batch_size=32, num_threads=4, device_id=0)
def tf_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed")
    images = fn.resize(images, resize_x=224, resize_y=224)
    return images, labels


def make_dataset(root):
    pipe = tf_pipe(root)
    return dali_tf.DALIDataset(
        pipeline=pipe,
        batch_size=32,
        output_shapes=((32, 224, 224, 3), (32, 1)),
        output_dtypes=(tf.uint8, tf.int32),
        device_id=0,
    )
