# golden-verify: pipe=jitter_pipe args=(str(DATA / "images"),) iterations=7
from nvidia.dali import fn, pipeline_def


@pipeline_def(batch_size=4, num_threads=1)
def jitter_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, seed=7)
    images = fn.decoders.image(jpegs)
    scale = fn.random.uniform(range=(0.8, 1.2), seed=42)
    flip = fn.random.coin_flip(seed=43)
    images = fn.resize(images, resize_x=scale * 32, resize_y=32)
    images = fn.flip(images, horizontal=flip)
    return images, labels
