# golden-run: pipe=decode_pipe args=(str(DATA / "images"),) iterations=8
"""Two loaders, each in its own thread, each with its own pipeline."""
import threading
import numpy as np

from nvidia.dali import types
import nvidia.dali.experimental.dynamic as ndd


def decode_pipe(image_dir, *, batch_size=4, num_threads=2, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=image_dir)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                images = ndd.resize(images, resize_x=16, resize_y=16)
                outputs = images, labels
            yield outputs


def load(image_dir, steps, out):
    pipe = decode_pipe(image_dir)
    for _ in range(steps):
        images, labels = next(pipe)
        out.append(np.array(ndd.as_tensor(labels.cpu())))


if __name__ == "__main__":
    results = [[], []]
    workers = [threading.Thread(target=load, args=("/data/images", 8, r)) for r in results]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    print([len(r) for r in results])
