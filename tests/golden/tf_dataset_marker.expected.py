import tensorflow as tf
import nvidia.dali.plugin.tf as dali_tf
from nvidia.dali import fn, pipeline_def, types


# dali-migrate: [pipeline-def] not converted: some uses of this pipeline in this file need a person (see the markers there)
@pipeline_def(batch_size=32, num_threads=4, device_id=0)
def tf_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed")
    images = fn.resize(images, resize_x=224, resize_y=224)
    return images, labels


def make_dataset(root):
    pipe = tf_pipe(root)
    # dali-migrate: [call-site] the pipeline `pipe` is given to DALIDataset, which dali-migrate does not convert: convert by hand
    # dali-migrate: [not-yet-converted] TensorFlow DALIDataset runs the pipeline object itself (compiled DALI TF plugin): keep this pipeline in pipeline mode; to move to dynamic mode instead, make the dataset with tf.data.Dataset.from_generator over the converted generator, each output as np.asarray(ndd.as_tensor(batch.cpu())), output_signature= a tf.TensorSpec per output from output_shapes/output_dtypes (the generator yields what the dataset did, batch after batch across epochs)
    return dali_tf.DALIDataset(
        pipeline=pipe,
        batch_size=32,
        output_shapes=((32, 224, 224, 3), (32, 1)),
        output_dtypes=(tf.uint8, tf.int32),
        device_id=0,
    )
