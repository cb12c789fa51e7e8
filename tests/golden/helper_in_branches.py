# golden-verify: pipe=training_pipe args=(str(DATA / "images"),) kwargs=dict(batch_size=4, aug="strong") iterations=6
# golden-verify: pipe=training_pipe args=(str(DATA / "images"),) kwargs=dict(batch_size=4, aug="light") iterations=6
# golden-run: pipe=eval_pipe args=(str(DATA / "images"),) kwargs=dict(batch_size=3, flip=True) iterations=8
# golden-verify: pipe=blur_some args=(str(DATA / "images"),) kwargs=dict(batch_size=4) iterations=6
# golden-run: pipe=eval_pipe args=(str(DATA / "images"),) kwargs=dict(batch_size=3, flip=False) iterations=8
# golden-run: pipe=FlipPipe args=(str(DATA / "images"),) kwargs=dict(batch_size=4, num_threads=2, device_id=None, dim=2) iterations=6
"""Augmentations chosen by a Python flag, each branch calling helpers, as training scripts write them."""
from nvidia.dali import fn, pipeline_def, types
from nvidia.dali.pipeline import Pipeline


def random_resize(img, size):
    img = fn.resize(img, resize_x=size, resize_y=size)
    return fn.resize(img, size=(48, 48))


def blend(condition, true_case, false_case):
    return condition * true_case + (condition ^ True) * false_case


def mirror(img, both):
    img = fn.flip(img, horizontal=1)
    if both:
        img = fn.flip(img, vertical=1)
    return img


@pipeline_def(num_threads=2, device_id=0, seed=7)
def training_pipe(data_dir, aug="none"):
    jpegs, labels = fn.readers.file(file_root=data_dir, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, size=(48, 48))
    if aug == "strong":
        condition = fn.random.coin_flip(probability=0.5, dtype=types.UINT8)
        size = fn.random.uniform(range=(24.0, 40.0))
        images = blend(condition, random_resize(images, size), images)
    elif aug == "light":
        images = mirror(images, False)
    else:
        images = fn.cast(images, dtype=types.UINT8)
    return images, labels


@pipeline_def(num_threads=2, device_id=0)
def eval_pipe(data_dir, flip=False):
    jpegs, labels = fn.readers.file(file_root=data_dir, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed")
    if flip:
        images = mirror(images, both=True)
    return fn.resize(images, size=(32, 32)), labels


# an `if` on DALI data: the helper's operators run on the samples the branch gets, as DALI runs them
@pipeline_def(num_threads=2, device_id=0, enable_conditionals=True, seed=3)
def blur_some(data_dir):
    jpegs, labels = fn.readers.file(file_root=data_dir)
    images = fn.resize(fn.decoders.image(jpegs, device="mixed"), size=(32, 32))
    if fn.random.coin_flip(probability=0.5):
        images = blur(images, 2.0)
    return images, labels


def blur(img, sigma):
    return fn.gaussian_blur(img, sigma=sigma)


class FlipPipe(Pipeline):
    def __init__(self, data_dir, batch_size, num_threads, device_id, dim=3):
        super().__init__(batch_size, num_threads, device_id, seed=12)
        self.dim = dim
        self.data_dir = data_dir

    def transpose_fn(self, img):
        return fn.transpose(img, perm=(1, 0, 2))

    def define_graph(self):
        jpegs, labels = fn.readers.file(file_root=self.data_dir, name="Reader")
        img = fn.decoders.image(jpegs, device="cpu")
        if self.dim == 2:
            img = self.transpose_fn(img)
        return img, labels


pipe = training_pipe("/data/images", aug="strong", batch_size=4)
pipe.build()
images, labels = pipe.run()
