# golden-verify: pipe=training_pipe args=(str(DATA / "images"),) kwargs=dict(batch_size=4, aug="strong") iterations=6
# golden-verify: pipe=training_pipe args=(str(DATA / "images"),) kwargs=dict(batch_size=4, aug="light") iterations=6
# golden-run: pipe=eval_pipe args=(str(DATA / "images"),) kwargs=dict(batch_size=3, flip=True) iterations=8
# golden-verify: pipe=blur_some args=(str(DATA / "images"),) kwargs=dict(batch_size=4) iterations=6
# golden-run: pipe=eval_pipe args=(str(DATA / "images"),) kwargs=dict(batch_size=3, flip=False) iterations=8
# golden-run: pipe=FlipPipe args=(str(DATA / "images"),) kwargs=dict(batch_size=4, num_threads=2, device_id=None, dim=2) iterations=6
"""Augmentations chosen by a Python flag, each branch calling helpers, as training scripts write them."""
import secrets
from nvidia.dali import types
import nvidia.dali.experimental.dynamic as ndd


def per_sample_if(predicate, if_true, if_false, *batches):
    """An `if` on DALI data of a pipeline with enable_conditionals=True, sample by sample.

    The samples of ``batches`` whose ``predicate`` sample (a scalar on the CPU) is true go through
    ``if_true``, the others through ``if_false``: each branch runs on its own samples only, and not
    at all when it has none, as in the pipeline. What the branches return (a batch or a tuple of
    batches) is put back in sample order.
    """
    if predicate.device.device_type != "cpu":
        raise ValueError(
            "Conditions inside `if` statements are restricted to scalar (0-d tensors) inputs, that are "
            "placed on CPU. Got a GPU input as a condition of the `if` statement."
        )
    flags = []
    for sample in predicate:
        if sample.ndim != 0:
            raise ValueError(
                "Conditions inside `if` statements are restricted to scalar (0-d tensors) inputs, that are "
                f"placed on CPU. Got a {sample.ndim}-d input as a condition of the `if` statement."
            )
        flags.append(bool(sample.item()))

    def run(branch, side):
        picked = [i for i, flag in enumerate(flags) if flag is side]
        if not picked:
            return None
        if len(picked) == len(flags):
            return branch(*batches)
        # sample by sample: DALI 2.4's Batch.select(list) gives back the whole batch
        return branch(*[ndd.as_batch([batch.select(i) for i in picked]) for batch in batches])

    def merge(on_true, on_false):
        for what, a, b in (
            ("types", on_true.dtype, on_false.dtype),
            ("sample dimensions", on_true.ndim, on_false.ndim),
            ("layouts", on_true.layout or "", on_false.layout or ""),
            ("devices", on_true.device, on_false.device),
        ):
            if a != b:
                raise ValueError(
                    "Divergent data found in different branches of `if/else` control flow statement: "
                    f"the results are merged into one batch. Found distinct {what}: {a} and {b}."
                )
        samples = {True: iter(on_true), False: iter(on_false)}
        return ndd.as_batch([next(samples[flag]) for flag in flags])

    on_true, on_false = run(if_true, True), run(if_false, False)
    if on_false is None:
        return on_true
    if on_true is None:
        return on_false
    if isinstance(on_true, tuple):
        return tuple(merge(a, b) for a, b in zip(on_true, on_false))
    return merge(on_true, on_false)


def training_pipe(data_dir, aug="none", *, batch_size, num_threads=2, device_id=0, seed=7):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng = ndd.random.RNG(seed=seed_or_random)
    reader = ndd.readers.File(file_root=data_dir)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                images = ndd.resize(images, size=(48, 48))
                if aug == "strong":
                    condition = ndd.random.coin_flip(probability=0.5, dtype=types.UINT8, batch_size=batch_size, rng=rng)
                    size = ndd.random.uniform(range=(24.0, 40.0), batch_size=batch_size, rng=rng)
                    img = images
                    img = ndd.resize(img, resize_x=size, resize_y=size)
                    true_case = ndd.resize(img, size=(48, 48))
                    images = condition.gpu() * true_case + (condition ^ True).gpu() * images
                elif aug == "light":
                    img = images
                    img = ndd.flip(img, horizontal=1)
                    images = img
                else:
                    images = ndd.cast(images, dtype=types.UINT8)
                outputs = images, labels
            yield outputs


def eval_pipe(data_dir, flip=False, *, batch_size, num_threads=2, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=data_dir)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="gpu")
                if flip:
                    img = images
                    img = ndd.flip(img, horizontal=1)
                    img = ndd.flip(img, vertical=1)
                    images = img
                outputs = ndd.resize(images, size=(32, 32)), labels
            yield outputs


# an `if` on DALI data: the helper's operators run on the samples the branch gets, as DALI runs them
def blur_some(data_dir, *, batch_size, num_threads=2, device_id=0, seed=3):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng = ndd.random.RNG(seed=seed_or_random)
    reader = ndd.readers.File(file_root=data_dir)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.resize(ndd.decoders.image(jpegs, device="gpu"), size=(32, 32))

                def if_true(images):
                    images = ndd.gaussian_blur(images, sigma=2.0)
                    return images

                def if_false(images):
                    return images

                images = per_sample_if(ndd.random.coin_flip(probability=0.5, batch_size=batch_size, rng=rng), if_true, if_false, images)
                outputs = images, labels
            yield outputs


def FlipPipe(data_dir, batch_size, num_threads, device_id, dim=3, *, seed=12):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=data_dir)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                img = ndd.decoders.image(jpegs, device="cpu")
                if dim == 2:
                    img = ndd.transpose(img, perm=(1, 0, 2))
                outputs = img, labels
            yield outputs


pipe = training_pipe("/data/images", aug="strong", batch_size=4)
images, labels = next(pipe)
