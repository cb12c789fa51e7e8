# golden-run: pipe=cond_pipe args=(str(DATA / "images"),) iterations=8
from nvidia.dali import fn, pipeline_def, types


@pipeline_def(batch_size=4, num_threads=1, enable_conditionals=True)
def cond_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    if fn.squeeze(labels, axes=[0]) == 0:
        images = fn.flip(images, horizontal=1)
    else:
        images = fn.flip(images, vertical=1)
    return images, labels


@pipeline_def(batch_size=4, num_threads=1, enable_conditionals=False)
def plain_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root)
    return fn.decoders.image(jpegs), labels
