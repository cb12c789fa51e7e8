# golden-run: pipe=mxnet_pipe args=(str(DATA / "recordio" / "train.rec"), str(DATA / "recordio" / "train.idx")) iterations=6
from nvidia.dali import fn, pipeline_def


@pipeline_def(batch_size=4, num_threads=1)
def mxnet_pipe(rec, idx):
    jpegs, labels = fn.readers.mxnet(path=[rec], index_path=[idx])
    images = fn.decoders.image(jpegs)
    images = fn.resize(images, resize_shorter=16)
    return images, labels
