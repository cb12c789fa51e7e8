# golden-verify: pipe=make_pipeline args=(str(DATA / "images"), 4) iterations=7
"""A pipeline built by hand with `with pipe:`, as older DALI examples do, returned built."""
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import Pipeline


def make_pipeline(image_dir, batch_size, device_id=0):
    pipe = Pipeline(batch_size=batch_size, num_threads=2, device_id=device_id, seed=21)
    # the flip decision is made outside the `with` block and still belongs to the graph
    flip = fn.random.coin_flip(probability=0.5)
    with pipe:
        jpegs, labels = fn.readers.file(file_root=image_dir, random_shuffle=True, name="Reader")
        images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
        images = fn.resize(images, resize_x=32, resize_y=32)
        images = fn.flip(images, horizontal=flip)
        pipe.set_outputs(images, labels)
    pipe.build()
    return pipe


if __name__ == "__main__":
    pipe = make_pipeline("/data/imagenet/train", 64)
    for _ in range(10):
        images, labels = pipe.run()
        print(labels.as_cpu().as_array())
