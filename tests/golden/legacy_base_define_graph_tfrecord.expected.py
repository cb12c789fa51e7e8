# golden-verify: pipe=TFRecordPipeline kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "path": str(DATA / "tfrecord" / "train.tfrecord"), "index_path": str(DATA / "tfrecord" / "train.idx")} iterations=6
"""base_define_graph() shared by readers whose outputs come differently: a TFRecord reader's
dict of features, a Caffe2 LMDB and a file list; the graph has no random operator."""
import nvidia.dali.tfrecord as tfrec
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


def TFRecordPipeline(batch_size, num_threads, device_id, path, index_path, *, seed=12):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.TFRecord(path=path, index_path=index_path, features={
            "image/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
            "image/class/label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
        })

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        while True:
            for inputs in reader.next_epoch(batch_size=batch_size):
                with ctx:
                    images = inputs["image/encoded"]
                    labels = inputs["image/class/label"]
                    images = ndd.decoders.image(images, device="gpu", output_type=types.RGB)
                    images = ndd.resize(images, device="gpu", resize_x=16, resize_y=16)
                    output = ndd.crop_mirror_normalize(images, device="gpu", dtype=types.FLOAT, output_layout="CHW", mean=[128.0] * 3, std=[64.0] * 3)
                    outputs = (output, labels.gpu())
                yield outputs

    return batches()


def Caffe2ReadPipeline(batch_size, num_threads, device_id, lmdb_folder, *, seed=12):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.Caffe2(path=lmdb_folder)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                images = ndd.resize(images, device="gpu", resize_x=20, resize_y=20)
                output = ndd.crop_mirror_normalize(images, device="gpu", dtype=types.FLOAT, output_layout="CHW", mean=[128.0] * 3, std=[64.0] * 3)
                outputs = (output, labels.gpu())
            yield outputs


def FileListPipeline(batch_size, num_threads, device_id, file_list, *, seed=12):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_list=file_list)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                images = ndd.resize(images, device="gpu", resize_x=20, resize_y=20)
                output_2 = ndd.crop_mirror_normalize(images, device="gpu", dtype=types.FLOAT, output_layout="CHW", mean=[128.0] * 3, std=[64.0] * 3)
                output, labels = (output_2, labels.gpu())
                outputs = output, labels
            yield outputs


if __name__ == "__main__":
    tf_pipe = TFRecordPipeline(8, 2, 0, "train.tfrecord", "train.idx")
    lmdb_pipe = Caffe2ReadPipeline(8, 2, 0, "db/lmdb")
    list_pipe = FileListPipeline(8, 2, 0, "images_list.txt")
    for step in range(3):
        tf_images, tf_labels = next(tf_pipe)
        lmdb_images, lmdb_labels = next(lmdb_pipe)
        list_images, list_labels = next(list_pipe)
