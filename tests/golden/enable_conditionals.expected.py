# golden-run: pipe=cond_pipe args=(str(DATA / "images"),) iterations=8
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


def cond_pipe(root, *, batch_size=4, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=root)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, output_type=types.RGB)

                def if_true(images):
                    images = ndd.flip(images, horizontal=1)
                    return images

                def if_false(images):
                    images = ndd.flip(images, vertical=1)
                    return images

                images = per_sample_if(ndd.squeeze(labels, axes=[0]) == 0, if_true, if_false, images)
                outputs = images, labels
            yield outputs


def plain_pipe(root, *, batch_size=4, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=root)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                outputs = ndd.decoders.image(jpegs), labels
            yield outputs
