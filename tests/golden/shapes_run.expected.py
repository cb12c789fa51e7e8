# golden-run: pipe=shapes_pipe args=(str(DATA / "images"),) iterations=7
"""fn.shapes as pipelines use it: the decoded image sizes, in the default int64 and other types."""
from nvidia.dali import types
import nvidia.dali.experimental.dynamic as ndd


def shapes_pipe(root, *, batch_size=4, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=root)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, output_type=types.RGB)
                sizes = ndd.as_batch(images.shape, dtype=ndd.int64)
                hw = ndd.slice(ndd.as_batch(images.shape, dtype=types.INT32), 0, 2, axes=[0])
                as_float = ndd.as_batch(ndd.resize(images, resize_x=10).shape, dtype=types.FLOAT)
                scalar = ndd.as_batch(ndd.reductions.sum(labels).shape, dtype=ndd.int64)
                outputs = sizes, hw, as_float, ndd.as_batch(jpegs.shape, dtype=types.UINT64), scalar, labels
            yield outputs
