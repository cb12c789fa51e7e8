# golden-run: pipe=thumbnail_pipe args=(str(DATA / "images"),) iterations=12
"""Thumbnails for a preview grid: the pipeline's one output is held in a variable, then returned."""
import numpy as np
from nvidia.dali import types
import nvidia.dali.experimental.dynamic as ndd


def thumbnail_pipe(image_dir, size=48, *, batch_size=4, num_threads=2, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=image_dir)
    while True:
        for jpegs, _ in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                thumbnails = ndd.resize(images, resize_x=size, resize_y=size)
                outputs = (thumbnails,)
            yield outputs


if __name__ == "__main__":
    pipe = thumbnail_pipe("/data/previews")
    (thumbnails,) = next(pipe)
    print(np.array(ndd.as_tensor(thumbnails.cpu())).shape)
