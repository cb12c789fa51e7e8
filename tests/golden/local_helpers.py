# golden-verify: pipe=make_loader args=(str(DATA / "images"), 4) kwargs=dict(aug=True) iterations=6
# golden-verify: pipe=make_loader args=(str(DATA / "images"), 4) kwargs=dict(aug=False) iterations=6
# golden-verify: pipe=make_eval args=(str(DATA / "images"), 3) iterations=8
"""Augmentations written as functions inside the function that builds the pipeline, as insightface's
arcface loader writes them: a `with pipe:` graph and a nested @pipeline_def call them."""
from nvidia.dali import fn, pipeline_def, types
from nvidia.dali.pipeline import Pipeline

SIZE = 40


def shrink(img):
    return fn.resize(img, size=(SIZE, SIZE))


def make_loader(data_dir, batch_size, aug=False):
    def random_resize(img, resize_size, image_size=32):
        img = fn.resize(img, resize_x=resize_size, resize_y=resize_size)
        img = fn.resize(img, size=(image_size, image_size))
        return img

    def multiplexing(condition, true_case, false_case):
        neg_condition = condition ^ True
        return condition * true_case + neg_condition * false_case

    condition_resize = fn.random.coin_flip(probability=0.5, dtype=types.UINT8)
    size_resize = fn.random.uniform(range=(20.0, 28.0))
    pipe = Pipeline(batch_size=batch_size, num_threads=2, device_id=0, seed=5)
    with pipe:
        jpegs, labels = fn.readers.file(file_root=data_dir, name="reader")
        images = fn.decoders.image(jpegs, device="mixed")
        images = fn.resize(images, size=(32, 32))
        if aug:
            images = multiplexing(condition_resize, random_resize(images, size_resize), images)
        pipe.set_outputs(images, labels)
    pipe.build()
    return pipe


def make_eval(data_dir, batch_size):
    def center(img):
        return fn.crop(img, crop=(24, 24))

    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=0, seed=9)
    def eval_pipe():
        jpegs, labels = fn.readers.file(file_root=data_dir)
        images = fn.decoders.image(jpegs, device="mixed")
        return center(shrink(images)), labels

    return eval_pipe()
