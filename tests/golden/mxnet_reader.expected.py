# golden-run: pipe=mxnet_pipe args=(str(DATA / "recordio" / "train.rec"), str(DATA / "recordio" / "train.idx")) iterations=6
import nvidia.dali.experimental.dynamic as ndd


def mxnet_pipe(rec, idx, *, batch_size=4, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.MXNet(path=[rec], index_path=[idx])
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs)
                images = ndd.resize(images, resize_shorter=16)
                outputs = images, labels
            yield outputs
