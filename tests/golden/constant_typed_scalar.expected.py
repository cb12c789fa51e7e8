# golden-run: pipe=typed_constants args=(str(DATA / "images"),) iterations=7
"""Scalar constants given a type with ScalarConstant's methods, as DALI's expression examples write
them (`Constant(15).float32() - r`): the typed value in arithmetic and as an operator argument."""
from nvidia.dali import types
import nvidia.dali.experimental.dynamic as ndd


def typed_constants(root, *, batch_size=4, num_threads=2, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=root)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, output_type=types.RGB)
                images = ndd.resize(images, resize_x=8, resize_y=8)
                from_fifteen = 15.0 - labels
                narrow = images * ndd.tensor(2, dtype=ndd.uint8)
                wide = labels + ndd.tensor(3, dtype=ndd.int64)
                truncated = images // 2
                halved = (ndd.tensor(1.0, dtype=ndd.float64)) / images
                flags = labels == True
                step = 0.5
                stepped = images * step + step
                rotated = ndd.rotate(images, angle=90.0, fill_value=0)
                outputs = from_fifteen, narrow, wide, truncated, halved, flags, stepped, rotated
            yield outputs
