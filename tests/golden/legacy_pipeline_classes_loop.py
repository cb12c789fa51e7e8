# golden-run: pipe=MXNetReaderPipeline kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "shard_id": 1, "num_gpus": 2, "data_dir": str(DATA)} iterations=8
# golden-run: pipe=CaffeReadPipeline kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "shard_id": 1, "num_gpus": 2, "data_dir": str(DATA)} iterations=8 needs=("caffe_lmdb",)
# golden-run: pipe=FileReadPipeline kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "shard_id": 1, "num_gpus": 2, "data_dir": str(DATA)} iterations=8
# golden-run: pipe=TFRecordPipeline kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "shard_id": 1, "num_gpus": 2, "data_dir": str(DATA)} iterations=8
"""DALI's "various readers" notebooks (PyTorch): one Pipeline subclass per reader on a common base,
kept in a list with the range their labels must be in; one loop makes each class's pipelines, one
per GPU, and checks what DALIGenericIterator gives for them."""
import os.path

import numpy as np
import nvidia.dali.ops as ops
import nvidia.dali.tfrecord as tfrec
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin.pytorch import DALIGenericIterator

N = 2  # number of GPUs
BATCH_SIZE = 4  # batch size per GPU
ITERATIONS = 8


class CommonPipeline(Pipeline):
    def __init__(self, batch_size, num_threads, device_id):
        super(CommonPipeline, self).__init__(batch_size, num_threads, device_id, seed=12)

        self.decode = ops.decoders.Image(device="cpu", output_type=types.RGB)
        self.resize = ops.Resize(device="cpu", resize_x=24, resize_y=24, interp_type=types.INTERP_LINEAR)
        self.cmn = ops.CropMirrorNormalize(
            device="cpu", dtype=types.FLOAT, crop=(16, 16), mean=[128.0, 128.0, 128.0], std=[1.0, 1.0, 1.0]
        )

    def base_define_graph(self, inputs, labels):
        images = self.decode(inputs)
        images = self.resize(images)
        output = self.cmn(images)
        return (output, labels)


class MXNetReaderPipeline(CommonPipeline):
    def __init__(self, batch_size, num_threads, device_id, shard_id, num_gpus, data_dir):
        super(MXNetReaderPipeline, self).__init__(batch_size, num_threads, device_id)
        self.input = ops.readers.MXNet(
            path=[os.path.join(data_dir, "recordio", "train.rec")],
            index_path=[os.path.join(data_dir, "recordio", "train.idx")],
            shard_id=shard_id,
            num_shards=num_gpus,
        )

    def define_graph(self):
        images, labels = self.input(name="Reader")
        return self.base_define_graph(images, labels)


class CaffeReadPipeline(CommonPipeline):
    def __init__(self, batch_size, num_threads, device_id, shard_id, num_gpus, data_dir):
        super(CaffeReadPipeline, self).__init__(batch_size, num_threads, device_id)
        self.input = ops.readers.Caffe(path=os.path.join(data_dir, "caffe_lmdb"), shard_id=shard_id, num_shards=num_gpus)

    def define_graph(self):
        images, labels = self.input(name="Reader")
        return self.base_define_graph(images, labels)


class FileReadPipeline(CommonPipeline):
    def __init__(self, batch_size, num_threads, device_id, shard_id, num_gpus, data_dir):
        super(FileReadPipeline, self).__init__(batch_size, num_threads, device_id)
        self.input = ops.readers.File(file_root=os.path.join(data_dir, "images"))

    def define_graph(self):
        images, labels = self.input(name="Reader")
        return self.base_define_graph(images, labels)


class TFRecordPipeline(CommonPipeline):
    def __init__(self, batch_size, num_threads, device_id, shard_id, num_gpus, data_dir):
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
        images = inputs["image/encoded"]
        labels = inputs["image/class/label"]
        return self.base_define_graph(images, labels)


def main(data_dir):
    pipe_types = [
        [MXNetReaderPipeline, (0, 2)],
        [CaffeReadPipeline, (0, 2)],
        [FileReadPipeline, (0, 2)],
        [TFRecordPipeline, (0, 2)],
    ]
    for pipe_t in pipe_types:
        pipe_name, label_range = pipe_t
        print("RUN: " + pipe_name.__name__)
        pipes = [
            pipe_name(batch_size=BATCH_SIZE, num_threads=2, device_id=device_id, shard_id=device_id, num_gpus=N, data_dir=data_dir)
            for device_id in range(N)
        ]
        pipes[0].build()
        dali_iter = DALIGenericIterator(pipes, ["data", "label"], pipes[0].epoch_size("Reader"))

        for i, data in enumerate(dali_iter):
            if i >= ITERATIONS:
                break
            for d in data:
                label = d["label"]
                image = d["data"]
                # labels need to be integers in the class's range
                assert np.equal(np.mod(label, 1), 0).all()
                assert (label >= label_range[0]).all()
                assert (label <= label_range[1]).all()
                print(i, tuple(image.shape), label.flatten().tolist(), float(image.sum()))
        print("OK : " + pipe_name.__name__)
