# golden-run: pipe=arith_pipe args=(str(DATA / "images"),) iterations=12
from nvidia.dali import fn, pipeline_def, types


@pipeline_def(batch_size=4, num_threads=2)
def arith_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    images = fn.cast(images, dtype=types.FLOAT)
    normalized = (images - 127.5) / 127.5
    doubled = labels * 2 + 1
    is_odd = (labels % 2) == 1
    return normalized, doubled, is_odd, -normalized
