# golden-run: pipe=caffe_pipe args=(str(DATA / "caffe_lmdb"),) iterations=6
from nvidia.dali import fn, pipeline_def


@pipeline_def(batch_size=3, num_threads=1)
def caffe_pipe(path):
    jpegs, labels = fn.readers.caffe(path=path)
    images = fn.decoders.image(jpegs)
    return fn.resize(images, resize_x=20, resize_y=20), labels
