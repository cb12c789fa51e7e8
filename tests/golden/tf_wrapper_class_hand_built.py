"""A class that wraps a hand-built pipeline for TensorFlow, as DALI's EfficientDet and YOLOv4
examples write it: the pipeline is made in __init__, defined in another method with operators
from a module of helpers, and given to DALIDataset."""
import nvidia.dali as dali
import nvidia.dali.plugin.tf as dali_tf
import tensorflow as tf

from . import ops


class DetectionPipeline:
    def __init__(self, file_root, annotations_file, batch_size, image_size, num_threads, device_id, seed):
        self._file_root = file_root
        self._annotations_file = annotations_file
        self._batch_size = batch_size
        self._image_size = image_size
        self._device_id = device_id

        self._pipe = dali.pipeline.Pipeline(
            batch_size=batch_size, num_threads=num_threads, device_id=device_id, seed=seed
        )
        self._define_pipeline()

    def _define_pipeline(self):
        with self._pipe:
            images, bboxes, classes = ops.input(self._file_root, self._annotations_file, self._device_id)
            images = dali.fn.resize(images, resize_x=self._image_size[0], resize_y=self._image_size[1])
            images, bboxes = ops.flip(images, bboxes)
            labels = dali.fn.cat(bboxes, dali.fn.expand_dims(classes, axes=1), axis=1)
            self._pipe.set_outputs(images.gpu(), labels.gpu())

    def dataset(self):
        output_shapes = ((self._batch_size, self._image_size[0], self._image_size[1], 3), (self._batch_size, None, 5))
        output_dtypes = (tf.float32, tf.float32)
        return dali_tf.DALIDataset(
            pipeline=self._pipe,
            batch_size=self._batch_size,
            output_shapes=output_shapes,
            output_dtypes=output_dtypes,
            device_id=self._device_id,
        )

    def build(self):
        self._pipe.build()

    def run(self):
        return self._pipe.run()
