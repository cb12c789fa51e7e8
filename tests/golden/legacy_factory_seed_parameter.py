# golden-verify: pipe=create_pipeline args=(str(DATA / "images"), 4, 0) iterations=6
"""swinunetr-style factory: its own `seed` shuffles the reader, the Pipeline's seed drives the flips."""
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline


def create_pipeline(data_dir, batch_size, device_id, seed=42):
    pipe = Pipeline(batch_size=batch_size, num_threads=2, device_id=device_id, seed=1234)
    with pipe:
        jpegs, labels = fn.readers.file(file_root=data_dir, random_shuffle=True, seed=seed)
        images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
        images = fn.resize(images, resize_x=16, resize_y=16)
        images = fn.flip(images, horizontal=fn.random.coin_flip())
        pipe.set_outputs(images, labels)
    return pipe


def loader(data_dir, rank):
    pipe = create_pipeline(data_dir, 8, rank, seed=7)
    pipe.build()
    for _ in range(3):
        images, labels = pipe.run()
        yield images.as_cpu().as_array(), labels.as_array()
