# golden-run: pipe=tfrecord_pipe args=(str(DATA / "tfrecord" / "train.tfrecord"), str(DATA / "tfrecord" / "train.idx")) iterations=6
import nvidia.dali.fn as fn
import nvidia.dali.tfrecord as tfrec
from nvidia.dali import pipeline_def


@pipeline_def(batch_size=4, num_threads=2)
def tfrecord_pipe(path, index_path):
    inputs = fn.readers.tfrecord(
        path=path,
        index_path=index_path,
        features={
            "image/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
            "image/class/label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
        },
    )
    images = fn.decoders.image(inputs["image/encoded"])
    images = fn.resize(images, resize_x=28, resize_y=28)
    return images, inputs["image/class/label"]
