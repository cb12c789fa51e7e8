# golden-run: pipe=normalize_pipe args=(str(DATA / "images"),) kwargs={"size": 20} iterations=12
import os

from nvidia.dali import fn, pipeline_def, types

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


@pipeline_def(batch_size=4, num_threads=1)
def normalize_pipe(root, size=32):
    mean = [m * 255 for m in MEAN]
    std = [s * 255 for s in STD]
    root = os.path.abspath(root)
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    images = fn.resize(images, resize_x=size, resize_y=size)
    images = fn.crop_mirror_normalize(images, mean=mean, std=std, dtype=types.FLOAT, output_layout="HWC")
    return images, labels
