# golden-run: pipe=flip_pipe args=(str(DATA / "images"),) iterations=12
import nvidia.dali.experimental.dynamic as ndd


def flip_pipe(root, *, batch_size=4, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=root)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs)
                flipped = ndd.flip(images, horizontal=1)
                rotated = ndd.rotate(images, angle=90, fill_value=0)
                outputs = flipped, rotated, labels
            yield outputs
