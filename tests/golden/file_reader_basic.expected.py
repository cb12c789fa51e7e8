# golden-run: pipe=simple_pipe args=(str(DATA / "images"),) iterations=12
from nvidia.dali import types
import nvidia.dali.experimental.dynamic as ndd


def simple_pipe(data_dir, *, batch_size=4, num_threads=2, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=data_dir)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="cpu", output_type=types.RGB)
                images = ndd.resize(images, resize_x=32, resize_y=32)
                outputs = images, labels
            yield outputs


pipe = simple_pipe("/data/images")
for _ in range(3):
    images, labels = next(pipe)
    print(images.shape, ndd.as_tensor(labels))
