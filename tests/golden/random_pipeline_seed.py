# golden-verify: pipe=augment_pipe args=(str(DATA / "images"),) iterations=5
from nvidia.dali import fn, pipeline_def, types


@pipeline_def(batch_size=8, num_threads=2, seed=1234)
def augment_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, initial_fill=64)
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    angle = fn.random.uniform(range=(-15.0, 15.0))
    images = fn.rotate(images, angle=angle, fill_value=0)
    mirror = fn.random.coin_flip(probability=0.5)
    brightness = fn.random.normal(mean=1.0, stddev=0.1)
    images = fn.brightness(images, brightness=brightness)
    images = fn.flip(images, horizontal=mirror)
    return images, labels
