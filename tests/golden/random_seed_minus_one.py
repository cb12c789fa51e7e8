# golden-verify: pipe=noisy_pipe args=(str(DATA / "images"),) iterations=7
from nvidia.dali import fn, pipeline_def


@pipeline_def(batch_size=4, num_threads=1, seed=-1)
def noisy_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs)
    images = fn.noise.gaussian(images, stddev=10.0)
    return images, labels


@pipeline_def(batch_size=4, num_threads=1)
def unseeded_pipe():
    return fn.random.uniform(range=(0, 1), shape=(2,))


pipe = noisy_pipe("/data")
pipe.build()
pipe.run()
