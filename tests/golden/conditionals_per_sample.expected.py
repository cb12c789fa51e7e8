# golden-run: pipe=exposure_pipe args=(str(DATA / "images"),) kwargs={"batch_size": 5} iterations=9
"""Classification input pipeline that corrects each image's exposure on its own (DALI conditionals)."""
import nvidia.dali.types as types
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


def exposure_pipe(data_dir, size=32, fix_small=True, *, batch_size, num_threads=4, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=data_dir)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                # the longest side, from the encoded header (no decoding needed)
                longest = ndd.reductions.max(ndd.peek_image_shape(jpegs))
                images = ndd.decoders.image(jpegs, output_type=types.RGB)
                brightness = ndd.reductions.mean(images)

                # too dark
                def if_true(brightness, images, longest):
                    images = ndd.brightness_contrast(images, brightness=1.5)
                    return images

                def if_false(brightness, images, longest):
                    def if_true_2(images, longest):
                        images = ndd.brightness_contrast(images, contrast=0.7)

                        def if_true_3(images):
                            images = ndd.gaussian_blur(images, window_size=3)
                            return images

                        def if_false_3(images):
                            return images

                        images = per_sample_if(longest > 55, if_true_3, if_false_3, images)
                        return images

                    def if_false_2(images, longest):
                        return images

                    images = per_sample_if(brightness > 150, if_true_2, if_false_2, images, longest)
                    return images

                images = per_sample_if(brightness < 110, if_true, if_false, brightness, images, longest)
                if fix_small:
                    def if_true_4(images):
                        return images

                    def if_false_4(images):
                        images = ndd.resize(images, resize_longer=2 * size)
                        return images

                    images = per_sample_if(longest >= 40, if_true_4, if_false_4, images)
                images = ndd.resize(images, resize_x=size, resize_y=size)
                outputs = images, labels
            yield outputs
