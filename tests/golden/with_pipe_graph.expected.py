# golden-verify: pipe=make_pipeline args=(str(DATA / "images"), 4) iterations=7
"""A pipeline built by hand with `with pipe:`, as older DALI examples do, returned built."""
import secrets
import numpy as np
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


def make_pipeline(image_dir, batch_size, device_id=0):
    def pipe_batches(*, batch_size=batch_size, num_threads=2, device_id=device_id, seed=21):
        ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
        seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
        rng = ndd.random.RNG(seed=seed_or_random)
        reader = ndd.readers.File(file_root=image_dir, random_shuffle=True, seed=seed_or_random)
        while True:
            for jpegs, labels in reader.next_epoch(batch_size=batch_size):
                with ctx:
                    # the flip decision is made outside the `with` block and still belongs to the graph
                    flip = ndd.random.coin_flip(probability=0.5, batch_size=batch_size, rng=rng)
                    images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                    images = ndd.resize(images, resize_x=32, resize_y=32)
                    images = ndd.flip(images, horizontal=flip)
                    outputs = images, labels
                yield outputs

    pipe = pipe_batches()
    return pipe


if __name__ == "__main__":
    pipe = make_pipeline("/data/imagenet/train", 64)
    for _ in range(10):
        images, labels = next(pipe)
        print(np.array(ndd.as_tensor(labels.cpu())))
