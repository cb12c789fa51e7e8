# golden-verify: pipe=build_loader_pipe args=(str(DATA / "images"), 4, True) kwargs=dict(cuda=False) iterations=6
# golden-verify: pipe=build_loader_pipe args=(str(DATA / "images"), 4, False) kwargs=dict(cuda=False) iterations=6
# golden-verify: pipe=build_loader_pipe args=(str(DATA / "images"), 4, True) kwargs=dict(cuda=True) device=gpu iterations=6
"""ColossalAI-style loader: the factory's `with pipe:` graph ends by choosing its outputs, moved
to the GPU or not; training adds a mirror flag as a third output."""
import torch
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline


def build_loader_pipe(root, batch_size, training, cuda=True, num_threads=2):
    pipe = Pipeline(batch_size=batch_size,
                    num_threads=num_threads,
                    device_id=torch.cuda.current_device() if cuda else None,
                    seed=1024)
    with pipe:
        jpegs, label = fn.readers.file(file_root=root, random_shuffle=training, name="Reader")
        images = fn.decoders.image(jpegs, device="mixed" if cuda else "cpu", output_type=types.RGB)
        if training:
            images = fn.random_resized_crop(images, size=32)
            flip = fn.random.coin_flip(probability=0.5)
            images = fn.flip(images, horizontal=flip)
        else:
            images = fn.resize(images, resize_shorter=36)
            images = fn.crop(images, crop=(32, 32))
        images = fn.cast(images, dtype=types.FLOAT) / 255.0
        if cuda:    # transfer data to gpu
            pipe.set_outputs(images.gpu(), label.gpu())
        elif training:
            pipe.set_outputs(images, label, flip)
        else:
            pipe.set_outputs(images, label)
    pipe.build()
    return pipe


def first_batches(root, n=2):
    pipe = build_loader_pipe(root, 4, training=False, cuda=False)
    return [pipe.run() for _ in range(n)]
