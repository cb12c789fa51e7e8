# golden-run: pipe=shapes_pipe args=(str(DATA / "images"),) iterations=7
"""fn.shapes as pipelines use it: the decoded image sizes, in the default int64 and other types."""
from nvidia.dali import fn, pipeline_def, types


@pipeline_def(batch_size=4, num_threads=1)
def shapes_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    sizes = fn.shapes(images)
    hw = fn.slice(fn.shapes(images, dtype=types.INT32), 0, 2, axes=[0])
    as_float = fn.shapes(fn.resize(images, resize_x=10), dtype=types.FLOAT)
    scalar = fn.shapes(fn.reductions.sum(labels))
    return sizes, hw, as_float, fn.shapes(jpegs, dtype=types.UINT64), scalar, labels
