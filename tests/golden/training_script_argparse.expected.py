# golden-verify: pipe=create_pipeline args=(str(DATA / "images"), 32, True) kwargs={"batch_size": 4} iterations=7
#!/usr/bin/env python
"""Train a classifier on an image folder with DALI."""

import argparse
import time

import numpy as np
import secrets
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


def create_pipeline(data_dir, crop, is_training, *, batch_size, num_threads=None, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    reader = ndd.readers.File(file_root=data_dir, random_shuffle=is_training, pad_last_batch=True, seed=seed_or_random)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                images = ndd.resize(images, resize_x=crop, resize_y=crop)
                images = ndd.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW", mean=[127.5] * 3, std=[127.5] * 3)
                outputs = images, labels
            yield outputs


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("data_dir")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--crop", type=int, default=224)
    return parser.parse_args()


def main():
    args = parse_args()
    pipe = create_pipeline(
        args.data_dir,
        args.crop,
        True,
        batch_size=args.batch_size,
        num_threads=args.workers,
        device_id=0,
        seed=1,
    )
    steps = ndd.readers.File(file_root=args.data_dir, pad_last_batch=True).get_metadata()["epoch_size_padded"] // args.batch_size
    for epoch in range(args.epochs):
        start = time.time()
        for step in range(steps):
            images, labels = next(pipe)
            host_labels = np.asarray(ndd.as_tensor(labels.cpu()))  # noqa: F841
        print(f"epoch {epoch}: {steps * args.batch_size / (time.time() - start):.1f} img/s")


if __name__ == "__main__":
    main()
