# golden-run: pipe=equalize_pipe args=(str(DATA / "images"),) iterations=12
from nvidia.dali import fn, pipeline_def


@pipeline_def(batch_size=4, num_threads=1)
def equalize_pipe(root):
    jpegs, _ = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs)
    equalized = fn.experimental.equalize(images)
    return equalized
