# golden-verify: pipe=AugmentPipeline kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "data_dir": str(DATA / "images")} iterations=7
"""A Pipeline subclass that splits its work into methods: __init__ calls one to make the
operators, define_graph calls others (which call each other, with keyword arguments and
defaults), and __len__ / describe() are there for its users."""
import secrets
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


def AugmentPipeline(batch_size, num_threads, device_id, data_dir, crop=24, epoch=21, *, seed=7):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng = ndd.random.RNG(seed=seed_or_random)
    reader = ndd.readers.File(file_root=data_dir, random_shuffle=True, seed=seed_or_random)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                # the images as they are, and augmented twice
                plain = ndd.resize(images, device="gpu", resize_x=32, resize_y=32)
                images_3 = images
                images_3 = ndd.resize(images_3, device="gpu", resize_x=32, resize_y=32)
                images_2 = images_3
                # where each crop starts: one draw per sample and axis
                images_2 = ndd.crop(images_2, crop_pos_x=ndd.random.uniform(range=(0.0, 1.0), batch_size=batch_size, rng=rng), crop_pos_y=ndd.random.uniform(range=(0.0, 1.0), batch_size=batch_size, rng=rng), device="gpu", crop=(crop, crop))
                images_3 = images_2
                images_3 = ndd.flip(images_3, horizontal=ndd.random.coin_flip(probability=0.5, batch_size=batch_size, rng=rng), device="gpu")
                first = images_3
                images_5 = images
                images_5 = ndd.resize(images_5, device="gpu", resize_x=32, resize_y=32)
                images_4 = images_5
                # where each crop starts: one draw per sample and axis
                images_4 = ndd.crop(images_4, crop_pos_x=ndd.random.uniform(range=(0.0, 1.0), batch_size=batch_size, rng=rng), crop_pos_y=ndd.random.uniform(range=(0.0, 1.0), batch_size=batch_size, rng=rng), device="gpu", crop=(crop, crop))
                images_5 = images_4
                second = images_5
                outputs = plain, first, second, labels
            yield outputs


if __name__ == "__main__":
    pipe = AugmentPipeline(batch_size=8, num_threads=2, device_id=0, data_dir="data/images")
    for step in range(3):
        plain, first, second, labels = next(pipe)
