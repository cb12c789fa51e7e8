# golden-verify: pipe=make_loader args=(str(DATA / "images"), 4) kwargs=dict(aug=True) iterations=6
# golden-verify: pipe=make_loader args=(str(DATA / "images"), 4) kwargs=dict(aug=False) iterations=6
# golden-verify: pipe=make_eval args=(str(DATA / "images"), 3) iterations=8
"""Augmentations written as functions inside the function that builds the pipeline, as insightface's
arcface loader writes them: a `with pipe:` graph and a nested @pipeline_def call them."""
import secrets
from nvidia.dali import types
import nvidia.dali.experimental.dynamic as ndd

SIZE = 40


def make_loader(data_dir, batch_size, aug=False):
    def pipe_batches(*, batch_size=batch_size, num_threads=2, device_id=0, seed=5):
        ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
        seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
        rng = ndd.random.RNG(seed=seed_or_random)
        reader = ndd.readers.File(file_root=data_dir)
        while True:
            for jpegs, labels in reader.next_epoch(batch_size=batch_size):
                with ctx:
                    condition_resize = ndd.random.coin_flip(probability=0.5, dtype=types.UINT8, batch_size=batch_size, rng=rng)
                    size_resize = ndd.random.uniform(range=(20.0, 28.0), batch_size=batch_size, rng=rng)
                    images = ndd.decoders.image(jpegs, device="gpu")
                    images = ndd.resize(images, size=(32, 32))
                    if aug:
                        img = images
                        img = ndd.resize(img, resize_x=size_resize, resize_y=size_resize)
                        img = ndd.resize(img, size=(32, 32))
                        true_case = img
                        neg_condition = condition_resize ^ True
                        images = condition_resize.gpu() * true_case + neg_condition.gpu() * images
                    outputs = images, labels
                yield outputs

    pipe = pipe_batches()
    return pipe


def make_eval(data_dir, batch_size):
    def eval_pipe(*, batch_size=batch_size, num_threads=2, device_id=0, seed=9):
        ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
        reader = ndd.readers.File(file_root=data_dir)
        while True:
            for jpegs, labels in reader.next_epoch(batch_size=batch_size):
                with ctx:
                    images = ndd.decoders.image(jpegs, device="gpu")
                    outputs = ndd.crop(ndd.resize(images, size=(SIZE, SIZE)), crop=(24, 24)), labels
                yield outputs

    return eval_pipe()
