# golden-verify: pipe=HybridPipe kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "data_dir": str(DATA / "images")} iterations=7
import secrets
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


def HybridPipe(batch_size, num_threads, device_id, data_dir, *, seed=12):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    reader = ndd.readers.File(file_root=data_dir, random_shuffle=True, seed=seed_or_random)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                images = ndd.resize(images, device="gpu", resize_x=224, resize_y=224)
                outputs = images, labels
            yield outputs


pipe = HybridPipe(batch_size=32, num_threads=2, device_id=0, data_dir="/data")
images, labels = next(pipe)
