# golden-run: pipe=equalize_pipe args=(str(DATA / "images"),) iterations=12
import nvidia.dali.experimental.dynamic as ndd


def equalize_pipe(root, *, batch_size=4, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=root)
    while True:
        for jpegs, _ in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs)
                equalized = ndd.equalize(images)
                outputs = (equalized,)
            yield outputs
