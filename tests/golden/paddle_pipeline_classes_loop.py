# golden-run: pipe=FileReadPipeline kwargs={"batch_size": 3, "num_threads": 2, "device_id": None, "num_gpus": 2, "data_dir": str(DATA)} iterations=9
# golden-run: pipe=TFRecordPipeline kwargs={"batch_size": 3, "num_threads": 2, "device_id": None, "num_gpus": 2, "data_dir": str(DATA)} iterations=5
"""DALI's "various readers" notebook for Paddle, cut down to two readers: Pipeline subclasses kept
with their label ranges in a list, each made once per GPU in one loop and read through Paddle's
DALIGenericIterator."""
import os

import numpy as np
import nvidia.dali.ops as ops
import nvidia.dali.tfrecord as tfrec
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin.paddle import DALIGenericIterator

N = 2  # number of GPUs
BATCH_SIZE = 3  # batch size per GPU


class CommonPipeline(Pipeline):
    def __init__(self, batch_size, num_threads, device_id):
        super(CommonPipeline, self).__init__(batch_size, num_threads, device_id, seed=12)
        self.decode = ops.decoders.Image(device="cpu", output_type=types.RGB)
        self.resize = ops.Resize(device="cpu", resize_x=20, resize_y=20)

    def base_define_graph(self, inputs, labels):
        images = self.decode(inputs)
        return (self.resize(images), labels)


class FileReadPipeline(CommonPipeline):
    def __init__(self, batch_size, num_threads, device_id, num_gpus, data_dir):
        super(FileReadPipeline, self).__init__(batch_size, num_threads, device_id)
        self.input = ops.readers.File(file_root=os.path.join(data_dir, "images"))

    def define_graph(self):
        images, labels = self.input(name="Reader")
        return self.base_define_graph(images, labels)


class TFRecordPipeline(CommonPipeline):
    def __init__(self, batch_size, num_threads, device_id, num_gpus, data_dir):
        super(TFRecordPipeline, self).__init__(batch_size, num_threads, device_id)
        self.input = ops.readers.TFRecord(
            path=os.path.join(data_dir, "tfrecord", "train.tfrecord"),
            index_path=os.path.join(data_dir, "tfrecord", "train.idx"),
            features={
                "image/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
                "image/class/label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
            },
        )

    def define_graph(self):
        inputs = self.input(name="Reader")
        return self.base_define_graph(inputs["image/encoded"], inputs["image/class/label"])


def check_readers(data_dir, iterations=32):
    pipe_types = [(FileReadPipeline, (0, 2)), (TFRecordPipeline, (0, 2))]
    for pipe_name, label_range in pipe_types:
        print("RUN: " + pipe_name.__name__)
        pipes = [pipe_name(batch_size=BATCH_SIZE, num_threads=2, device_id=i, num_gpus=N, data_dir=data_dir) for i in range(N)]
        pipes[0].build()
        dali_iter = DALIGenericIterator(pipes, ["data", "label"], pipes[0].epoch_size("Reader"))
        for i, data in enumerate(dali_iter):
            if i >= iterations:
                break
            for d in data:
                label = np.array(d["label"])
                image = np.array(d["data"])
                assert np.equal(np.mod(label, 1), 0).all()
                assert ((label >= label_range[0]) & (label <= label_range[1])).all()
                print(i, image.shape, label.flatten().tolist(), int(image.sum()))
        print("OK : " + pipe_name.__name__)
