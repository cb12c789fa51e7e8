# golden-verify: pipe=create_pipeline args=(str(DATA / "images"), 4, 0) iterations=6
"""swinunetr-style factory: its own `seed` shuffles the reader, the Pipeline's seed drives the flips."""
import secrets
import numpy as np
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


def create_pipeline(data_dir, batch_size, device_id, seed=42):
    def pipe_batches(*, batch_size=batch_size, num_threads=2, device_id=device_id, pipeline_seed=1234):
        ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
        pipeline_seed_or_random = pipeline_seed if pipeline_seed is not None and pipeline_seed >= 0 else secrets.randbits(63)
        rng = ndd.random.RNG(seed=pipeline_seed_or_random)
        reader = ndd.readers.File(file_root=data_dir, random_shuffle=True, seed=seed if seed is not None else pipeline_seed_or_random)
        while True:
            for jpegs, labels in reader.next_epoch(batch_size=batch_size):
                with ctx:
                    images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                    images = ndd.resize(images, resize_x=16, resize_y=16)
                    images = ndd.flip(images, horizontal=ndd.random.coin_flip(batch_size=batch_size, rng=rng))
                    outputs = images, labels
                yield outputs

    pipe = pipe_batches()
    return pipe


def loader(data_dir, rank):
    pipe = create_pipeline(data_dir, 8, rank, seed=7)
    for _ in range(3):
        images, labels = next(pipe)
        yield np.array(ndd.as_tensor(images.cpu())), np.array(ndd.as_tensor(labels))
