# golden-run: pipe=math_pipe args=(str(DATA / "images"),) iterations=12
from nvidia.dali import types
import nvidia.dali.experimental.dynamic as ndd


def math_pipe(root, *, batch_size=4, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=root)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, output_type=types.GRAY)
                images = ndd.cast(images, dtype=types.FLOAT)
                clipped = ndd.math.clamp(images, 30.0, 200.0)
                roots = ndd.math.sqrt(clipped)
                scaled = ndd.math.pow(roots, 2.0) - clipped
                outputs = roots, scaled, ndd.math.abs(scaled), labels
            yield outputs
