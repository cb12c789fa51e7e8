# golden-run: pipe=blur_pipeline kwargs={"batch_size": 4, "device": "cpu", "window_size": 5} iterations=6
# The external source's device is a parameter of the pipeline function, chosen by its caller
# (a benchmark comparing the CPU and GPU variants of a filter).
import argparse

import numpy as np
import nvidia.dali.experimental.dynamic as ndd


def synthetic_batches():
    rng = np.random.default_rng(42)
    batches = []
    for _ in range(3):
        images = [rng.integers(0, 255, size=(16, 12, 3), dtype=np.uint8) for _ in range(4)]
        labels = [np.array([k], dtype=np.int32) for k in range(4)]
        batches.append((images, labels))
    while True:
        for images, labels in batches:
            yield images, labels


def blur_pipeline(device="gpu", window_size=3, *, batch_size, num_threads=4, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    source = synthetic_batches
    for source_data in source():
        with ctx:
            images, labels = ndd.batch(source_data[0], layout="HWC", device=device), ndd.batch(source_data[1], device=device)
            blurred = ndd.gaussian_blur(images, window_size=window_size)
            outputs = blurred, labels
        yield outputs


def benchmark(device, window_size, iterations):
    pipe = blur_pipeline(batch_size=4, device=device, window_size=window_size)
    for _ in range(iterations):
        blurred, labels = next(pipe)
    return blurred, labels


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="gpu", choices=["cpu", "gpu"])
    args = parser.parse_args()
    for window_size in (3, 7, 11):
        benchmark(args.device, window_size, 100)
