# golden-verify: pipe=FlipPipe kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "data_dir": str(DATA / "images")} iterations=7
"""Pipeline subclasses that extend another one of the file: one adds a step after the base graph,
one replaces the graph, the base itself is used too."""
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


def HybridPipe(batch_size, num_threads, device_id, data_dir, size=64, *, seed=12):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=data_dir)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                images = ndd.resize(images, device="gpu", resize_x=size, resize_y=size)
                outputs = images, labels
            yield outputs


def FlipPipe(batch_size, num_threads, device_id, data_dir, *, seed=12):
    """The same images, smaller and mirrored."""
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=data_dir)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                images = ndd.resize(images, device="gpu", resize_x=32, resize_y=32)
                outputs = ndd.flip(images, device="gpu", horizontal=1), labels
            yield outputs


def FullSizePipe(batch_size, num_threads, device_id, data_dir, size=64, *, seed=12):
    """Decoded images at their own size."""
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=data_dir)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                outputs = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB), labels
            yield outputs


if __name__ == "__main__":
    train = FlipPipe(batch_size=8, num_threads=2, device_id=0, data_dir="data/images")
    val = HybridPipe(8, 2, 0, "data/images")
    full = FullSizePipe(8, 2, 0, "data/images", size=128)
    for step in range(3):
        images, labels = next(train)
        val_images, val_labels = next(val)
        full_images, full_labels = next(full)
