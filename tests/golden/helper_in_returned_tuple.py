# golden-run: pipe=eval_pipeline args=(str(DATA / "images"),) kwargs=dict(batch_size=4) iterations=8
# golden-verify: pipe=train_pipeline args=(str(DATA / "images"),) kwargs=dict(batch_size=4) iterations=8
"""Augmentations in functions called inside the returned tuple, as DALI's webdataset notebook
writes them (`return decode_augment(img, seed=seed), label`)."""
import nvidia.dali as dali
import nvidia.dali.fn as fn


def decode_augment(img, seed=123):
    img = fn.decoders.image(img, device="mixed")
    img = fn.rotate(img, angle=fn.random.uniform(range=(-10.0, 10.0), seed=seed), fill_value=0)
    img = fn.resize(img, size=(64, 64))
    return img


def random_flip(images):
    mirror = fn.random.coin_flip(probability=0.5)
    return fn.flip(images, horizontal=mirror)


def decode(img, size=64):
    img = fn.decoders.image(img, device="mixed")
    return fn.resize(img, size=(size, size))


@dali.pipeline_def(batch_size=4, num_threads=2, device_id=0, seed=7)
def train_pipeline(root):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True)
    images = decode_augment(jpegs, seed=42)
    # two views of each image, each flipped at random on its own
    return random_flip(images), random_flip(images), labels.gpu()


@dali.pipeline_def(batch_size=4, num_threads=2, device_id=0)
def eval_pipeline(root):
    jpegs, labels = fn.readers.file(file_root=root)
    return decode(jpegs, size=48), labels
