# golden-run: pipe=fast_pipe args=(str(DATA / "images"),) iterations=12
import nvidia.dali.experimental.dynamic as ndd


def fast_pipe(root, *, batch_size=4, num_threads=2, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=root, prefetch_queue_depth=2)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs)
                outputs = ndd.resize(images, resize_x=12, resize_y=12), labels
            yield outputs


pipe = fast_pipe("/data")
next(pipe)
