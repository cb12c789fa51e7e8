"""Video loader written for a custom DALI build (PaddleVideo's TSN loader: its DALI took num_seg= and
seg_length= on the video reader), and a pipeline using an argument's old name: neither runs on a
released DALI, so neither is converted. The validation pipeline beside them converts."""
import nvidia.dali.fn as fn
import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali import pipeline_def
from nvidia.dali.pipeline import Pipeline


class VideoPipe(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, file_list, sequence_length, num_seg, seg_length,
                 is_training=False, num_shards=1, shard_id=0):
        super(VideoPipe, self).__init__(batch_size, num_threads, device_id)
        self.input = ops.VideoReader(device="gpu",
                                     file_list=file_list,
                                     sequence_length=sequence_length,
                                     num_seg=num_seg,
                                     seg_length=seg_length,
                                     is_training=is_training,
                                     num_shards=num_shards,
                                     shard_id=shard_id,
                                     random_shuffle=is_training)
        self.cast_label = ops.Cast(device="gpu", dtype=types.DALIDataType.INT64)

    def define_graph(self):
        output, label = self.input(name="Reader")
        label = self.cast_label(label)
        return output, label


@pipeline_def
def shapes_pipeline(file_root):
    jpegs, labels = fn.readers.file(file_root=file_root)
    shapes = fn.peek_image_shape(jpegs, type=types.FLOAT)
    return shapes, labels


@pipeline_def
def val_pipeline(file_root):
    jpegs, labels = fn.readers.file(file_root=file_root)
    shapes = fn.peek_image_shape(jpegs, dtype=types.FLOAT)
    return shapes, labels


def main(file_root):
    pipe = val_pipeline(file_root, batch_size=4, num_threads=2, device_id=0)
    pipe.build()
    shapes, labels = pipe.run()
    return shapes.as_array()
