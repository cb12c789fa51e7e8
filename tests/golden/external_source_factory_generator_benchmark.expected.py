# golden-run: pipe=pipeline_box args=(lambda: (yield from __import__("itertools").cycle([([(__import__("numpy").arange(108) * (i + 1) % 251).astype("uint8").reshape(6, 6, 3) for i in range(4)], [__import__("numpy").array([i], dtype="int32") for i in range(4)])])),) kwargs={"batch_size": 4, "window_size": 3, "device": "cpu"} iterations=6
"""Convolution benchmark over cached batches, as DALI's conv_perf notebook writes it: a function of
the file runs a decoding pipeline a few times and returns a generator function that replays its
batches forever; the benchmark helper gets the pipeline function to time, makes it with that
source, and resets the pipeline after every timed epoch."""
import time

import numpy as np
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd

data_path = "/data/imagenet/train"


def read_images_pipeline(data_path, device="gpu", *, batch_size, num_threads=None, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=data_path)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="cpu" if device == "cpu" else "gpu", output_type=types.RGB)
                outputs = images, labels
            yield outputs


def synth_imgs_data(data_path, batch_size, device="gpu"):
    pipe = read_images_pipeline(data_path=data_path, num_threads=4, batch_size=batch_size, device_id=0, device=device)
    cached = [next(pipe) for _ in range(20)]

    def source():
        while True:
            for images, labels in cached:
                yield images, labels

    return source


def pipeline_box(cb, device="gpu", window_size=3, *, batch_size, num_threads=None, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    filters = np.full((window_size, window_size), 1. / (window_size ** 2), dtype=np.float32)
    source_2 = cb

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        for source_data in source_2():
            with ctx:
                images, labels = ndd.batch(source_data[0], layout="HWC", device=device), ndd.batch(source_data[1], device=device)
                edges = ndd.filter(images, filters)
                outputs = edges, labels
            yield outputs

    return batches()


def pipeline_gb(cb, device="gpu", window_size=3, *, batch_size, num_threads=None, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    source_2 = cb
    for source_data in source_2():
        with ctx:
            images, labels = ndd.batch(source_data[0], device=device), ndd.batch(source_data[1], device=device)
            edges = ndd.gaussian_blur(images, window_size=window_size)
            outputs = edges, labels
        yield outputs


def run_pipeline(pipe, epoch_size, batch_size, num_epochs=3):
    num_iters = epoch_size // batch_size
    speeds = []
    for epoch in range(num_epochs):
        start = time.time()
        for i in range(num_iters):
            try:
                next(pipe)
            except StopIteration:
                assert i == num_iters - 1
        speeds.append(num_iters * batch_size / (time.time() - start))
    return speeds[-1]


def benchmark(pipeline, batch_size, window_size=3):
    device = "gpu"
    source = synth_imgs_data(data_path, batch_size=batch_size, device=device)
    pipe = pipeline(source, num_threads=4, batch_size=batch_size, device_id=0, device=device, window_size=window_size)
    return run_pipeline(pipe, 128 * 400, batch_size)


box, gb = [], []
for window_size in (3, 7, 11, 15, 51):
    box.append(benchmark(pipeline_box, 128, window_size=window_size))
    gb.append(benchmark(pipeline_gb, 128, window_size=window_size))
print(box, gb)
