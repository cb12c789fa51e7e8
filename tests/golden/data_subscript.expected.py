# golden-run: pipe=crops args=(str(DATA / "images"),) kwargs={"batch_size": 3} iterations=4
from nvidia.dali import types
import nvidia.dali.experimental.dynamic as ndd


def crops(root, *, batch_size, num_threads=2, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=root)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, output_type=types.RGB)
                images = ndd.resize(images, resize_x=32, resize_y=24)
                red = images.slice[:, :, 0]                 # one channel of every image
                corner = images.slice[2:10, 4:12]           # the same window of every image
                flipped = images.slice[::-1]                # rows reversed
                outputs = red, corner, flipped, labels.slice[0]
            yield outputs
