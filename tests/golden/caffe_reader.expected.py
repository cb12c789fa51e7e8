# golden-run: pipe=caffe_pipe args=(str(DATA / "caffe_lmdb"),) iterations=6
import nvidia.dali.experimental.dynamic as ndd


def caffe_pipe(path, *, batch_size=3, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.Caffe(path=path)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs)
                outputs = ndd.resize(images, resize_x=20, resize_y=20), labels
            yield outputs
