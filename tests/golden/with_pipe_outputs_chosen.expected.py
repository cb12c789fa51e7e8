# golden-verify: pipe=build_loader_pipe args=(str(DATA / "images"), 4, True) kwargs=dict(cuda=False) iterations=6
# golden-verify: pipe=build_loader_pipe args=(str(DATA / "images"), 4, False) kwargs=dict(cuda=False) iterations=6
# golden-verify: pipe=build_loader_pipe args=(str(DATA / "images"), 4, True) kwargs=dict(cuda=True) device=gpu iterations=6
"""ColossalAI-style loader: the factory's `with pipe:` graph ends by choosing its outputs, moved
to the GPU or not; training adds a mirror flag as a third output."""
import torch
import secrets
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


def build_loader_pipe(root, batch_size, training, cuda=True, num_threads=2):
    def pipe_batches(*, batch_size=batch_size, num_threads=num_threads, device_id=torch.cuda.current_device() if cuda else None, seed=1024):
        ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
        seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
        rng = ndd.random.RNG(seed=seed_or_random)
        reader = ndd.readers.File(file_root=root, random_shuffle=training, seed=seed_or_random)
        while True:
            for jpegs, label in reader.next_epoch(batch_size=batch_size):
                with ctx:
                    images = ndd.decoders.image(jpegs, device="gpu" if cuda else "cpu", output_type=types.RGB)
                    if training:
                        images = ndd.random_resized_crop(images, size=32, batch_size=batch_size, rng=rng)
                        flip = ndd.random.coin_flip(probability=0.5, batch_size=batch_size, rng=rng)
                        images = ndd.flip(images, horizontal=flip)
                    else:
                        images = ndd.resize(images, resize_shorter=36)
                        images = ndd.crop(images, crop=(32, 32))
                    images = ndd.cast(images, dtype=types.FLOAT) / 255.0
                    if cuda:    # transfer data to gpu
                        pipe_outputs = images.gpu(), label.gpu()
                    elif training:
                        pipe_outputs = images, label, flip
                    else:
                        pipe_outputs = images, label
                    outputs = pipe_outputs
                yield outputs

    pipe = pipe_batches()
    return pipe


def first_batches(root, n=2):
    pipe = build_loader_pipe(root, 4, training=False, cuda=False)
    return [next(pipe) for _ in range(n)]
