# golden-run: pipe=flip_pipe args=(str(DATA / "images"),) iterations=12
import nvidia.dali.fn as dfn
from nvidia.dali import pipeline_def


@pipeline_def(batch_size=4, num_threads=1)
def flip_pipe(root):
    jpegs, labels = dfn.readers.file(file_root=root)
    images = dfn.decoders.image(jpegs)
    flipped = dfn.flip(images, horizontal=1)
    rotated = dfn.rotate(images, angle=90, fill_value=0)
    return flipped, rotated, labels
