# golden-verify: pipe=SimplePipeline kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "seed": 12, "data_dir": str(DATA / "images")} iterations=5
"""Every pipeline setting is a parameter of __init__, passed on positionally (DALI's
serialization example)."""
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


def SimplePipeline(batch_size, num_threads, device_id, seed, data_dir):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=data_dir)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                outputs = ndd.decoders.image(jpegs, device="cpu", output_type=types.RGB), labels
            yield outputs


pipe = SimplePipeline(batch_size=16, num_threads=2, device_id=0, seed=12, data_dir="/data")
out = next(pipe)
