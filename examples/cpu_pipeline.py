"""A small image-classification input pipeline, in DALI's pipeline mode, that runs on the CPU.

    python examples/cpu_pipeline.py fixtures/data/images
"""

import argparse

import numpy as np
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import pipeline_def


@pipeline_def(batch_size=4, num_threads=2, device_id=None)
def classify_pipe(data_root, size=32):
    jpegs, labels = fn.readers.file(file_root=data_root, name="Reader")
    images = fn.decoders.image(jpegs, device="cpu")
    images = fn.resize(images, resize_x=size, resize_y=size)
    # Normalise to roughly [-1, 1] and put channels first, as most models want.
    images = fn.crop_mirror_normalize(
        images,
        dtype=types.FLOAT,
        mean=[127.5, 127.5, 127.5],
        std=[127.5, 127.5, 127.5],
        output_layout="CHW",
    )
    return images, labels


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("data_root")
    parser.add_argument("--iterations", type=int, default=8)
    args = parser.parse_args()

    pipe = classify_pipe(args.data_root, batch_size=4)
    pipe.build()
    print("epoch size:", pipe.epoch_size("Reader"))
    for i in range(args.iterations):
        images, labels = pipe.run()
        first = np.asarray(images.at(0))
        print(f"iteration {i}: labels {labels.as_array().ravel().tolist()}, first image {first.shape} mean {first.mean():.4f}")


if __name__ == "__main__":
    main()
