# golden-verify: pipe=TFRecordPipeline kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "path": str(DATA / "tfrecord" / "train.tfrecord"), "index_path": str(DATA / "tfrecord" / "train.idx")} iterations=6
"""base_define_graph() shared by readers whose outputs come differently: a TFRecord reader's
dict of features, a Caffe2 LMDB and a file list; the graph has no random operator."""
import nvidia.dali.ops as ops
import nvidia.dali.tfrecord as tfrec
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline


class CommonPipeline(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, size=20):
        super().__init__(batch_size, num_threads, device_id, seed=12)
        self.decode = ops.decoders.Image(device="mixed", output_type=types.RGB)
        self.resize = ops.Resize(device="gpu", resize_x=size, resize_y=size)
        self.cmn = ops.CropMirrorNormalize(device="gpu", dtype=types.FLOAT, output_layout="CHW", mean=[128.0] * 3, std=[64.0] * 3)

    def base_define_graph(self, inputs, labels):
        images = self.decode(inputs)
        images = self.resize(images)
        output = self.cmn(images)
        return (output, labels.gpu())


class TFRecordPipeline(CommonPipeline):
    def __init__(self, batch_size, num_threads, device_id, path, index_path):
        super(TFRecordPipeline, self).__init__(batch_size, num_threads, device_id, size=16)
        self.input = ops.readers.TFRecord(
            path=path,
            index_path=index_path,
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


class Caffe2ReadPipeline(CommonPipeline):
    def __init__(self, batch_size, num_threads, device_id, lmdb_folder):
        super(Caffe2ReadPipeline, self).__init__(batch_size, num_threads, device_id)
        self.input = ops.readers.Caffe2(path=lmdb_folder)

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        return self.base_define_graph(jpegs, labels)


class FileListPipeline(CommonPipeline):
    def __init__(self, batch_size, num_threads, device_id, file_list):
        super(FileListPipeline, self).__init__(batch_size, num_threads, device_id)
        self.input = ops.readers.File(file_list=file_list)

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        output, labels = self.base_define_graph(jpegs, labels)
        return output, labels


if __name__ == "__main__":
    tf_pipe = TFRecordPipeline(8, 2, 0, "train.tfrecord", "train.idx")
    tf_pipe.build()
    lmdb_pipe = Caffe2ReadPipeline(8, 2, 0, "db/lmdb")
    lmdb_pipe.build()
    list_pipe = FileListPipeline(8, 2, 0, "images_list.txt")
    list_pipe.build()
    for step in range(3):
        tf_images, tf_labels = tf_pipe.run()
        lmdb_images, lmdb_labels = lmdb_pipe.run()
        list_images, list_labels = list_pipe.run()
