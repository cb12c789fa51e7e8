"""Pipeline classes listed with their label types, each made once per GPU by a function that gives
them to TensorFlow's DALIIterator op, as DALI's "TensorFlow with various readers" notebook does."""
import numpy as np
import nvidia.dali.ops as ops
import nvidia.dali.plugin.tf as dali_tf
import nvidia.dali.types as types
import tensorflow as tf
from nvidia.dali.pipeline import Pipeline

N = 2
BATCH_SIZE = 32
ITERATIONS = 4


# dali-migrate: [legacy-pipeline] not converted: class FileReadPipeline extends it and stays a class
class CommonPipeline(Pipeline):
    def __init__(self, batch_size, num_threads, device_id):
        super(CommonPipeline, self).__init__(batch_size, num_threads, device_id)
        self.decode = ops.decoders.Image(device="mixed", output_type=types.RGB)
        self.resize = ops.Resize(device="gpu", resize_shorter=256)
        self.cmn = ops.CropMirrorNormalize(device="gpu", dtype=types.FLOAT, crop=(227, 227))

    def base_define_graph(self, inputs, labels):
        images = self.decode(inputs)
        images = self.resize(images)
        output = self.cmn(images)
        return (output, labels.gpu())


# dali-migrate: [legacy-pipeline] not converted: the pipeline is given to TensorFlow's DALIIterator (`image, label = daliop(pipeline=pipes[d], shapes=[(BATCH_S...`), which runs the pipeline object itself (DALI's compiled TensorFlow plugin): it stays in pipeline mode (the marker there says how to move to dynamic mode instead)
class FileReadPipeline(CommonPipeline):
    def __init__(self, batch_size, num_threads, device_id, num_gpus):
        super(FileReadPipeline, self).__init__(batch_size, num_threads, device_id)
        self.input = ops.readers.File(file_root="images", shard_id=device_id, num_shards=num_gpus)

    def define_graph(self):
        images, labels = self.input()
        return self.base_define_graph(images, labels)


# dali-migrate: [legacy-pipeline] not converted: the pipeline is given to TensorFlow's DALIIterator (`image, label = daliop(pipeline=pipes[d], shapes=[(BATCH_S...`), which runs the pipeline object itself (DALI's compiled TensorFlow plugin): it stays in pipeline mode (the marker there says how to move to dynamic mode instead)
class CaffeReadPipeline(CommonPipeline):
    def __init__(self, batch_size, num_threads, device_id, num_gpus):
        super(CaffeReadPipeline, self).__init__(batch_size, num_threads, device_id)
        self.input = ops.readers.Caffe(path="lmdb", shard_id=device_id, num_shards=num_gpus)

    def define_graph(self):
        images, labels = self.input()
        return self.base_define_graph(images, labels)


def get_batch_test_dali(batch_size, pipe_type):
    pipe_name, label_type, _ = pipe_type
    pipes = [pipe_name(batch_size=batch_size, num_threads=2, device_id=device_id, num_gpus=N) for device_id in range(N)]

    # dali-migrate: [not-yet-converted] TensorFlow DALIIterator runs the pipeline object itself (compiled DALI TF plugin): keep this pipeline in pipeline mode; to move to dynamic mode instead, make the dataset with tf.data.Dataset.from_generator over the converted generator, each output as np.asarray(ndd.as_tensor(batch.cpu())), output_signature= a tf.TensorSpec per output from output_shapes/output_dtypes (the generator yields what the dataset did, batch after batch across epochs)
    daliop = dali_tf.DALIIterator()
    images = []
    labels = []
    for d in range(N):
        with tf.device("/gpu:%i" % d):
            image, label = daliop(pipeline=pipes[d], shapes=[(BATCH_SIZE, 3, 227, 227), ()], dtypes=[tf.int32, label_type], device_id=d)
            images.append(image)
            labels.append(label)
    return [images, labels]


pipe_types = [[FileReadPipeline, tf.int32, (0, 1)], [CaffeReadPipeline, tf.int32, (0, 999)]]
for pipe_name in pipe_types:
    print("RUN: " + pipe_name[0].__name__)
    test_batch = get_batch_test_dali(BATCH_SIZE, pipe_name)
    with tf.compat.v1.Session() as sess:
        for i in range(ITERATIONS):
            imgs, labels = sess.run(test_batch)
            for label in labels:
                assert np.equal(np.mod(label, 1), 0).all()
