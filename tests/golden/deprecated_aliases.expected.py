# golden-run: pipe=legacy_pipe args=(str(DATA / "images"),) iterations=12
from nvidia.dali import types
import nvidia.dali.experimental.dynamic as ndd


def legacy_pipe(root, *, batch_size=4, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=root)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, output_type=types.RGB)
                outputs = images, labels
            yield outputs
