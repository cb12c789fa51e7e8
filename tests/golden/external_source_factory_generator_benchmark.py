# golden-run: pipe=pipeline_box args=(lambda: (yield from __import__("itertools").cycle([([(__import__("numpy").arange(108) * (i + 1) % 251).astype("uint8").reshape(6, 6, 3) for i in range(4)], [__import__("numpy").array([i], dtype="int32") for i in range(4)])])),) kwargs={"batch_size": 4, "window_size": 3, "device": "cpu"} iterations=6
"""Convolution benchmark over cached batches, as DALI's conv_perf notebook writes it: a function of
the file runs a decoding pipeline a few times and returns a generator function that replays its
batches forever; the benchmark helper gets the pipeline function to time, makes it with that
source, and resets the pipeline after every timed epoch."""
import time

import numpy as np
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import pipeline_def

data_path = "/data/imagenet/train"


@pipeline_def
def read_images_pipeline(data_path, device="gpu"):
    jpegs, labels = fn.readers.file(name="Reader", file_root=data_path)
    images = fn.decoders.image(jpegs, device="cpu" if device == "cpu" else "mixed", output_type=types.RGB)
    return images, labels


def synth_imgs_data(data_path, batch_size, device="gpu"):
    pipe = read_images_pipeline(data_path=data_path, num_threads=4, batch_size=batch_size, device_id=0, device=device)
    pipe.build()
    cached = [pipe.run() for _ in range(20)]

    def source():
        while True:
            for images, labels in cached:
                yield images, labels

    return source


@pipeline_def
def pipeline_box(cb, device="gpu", window_size=3):
    images, labels = fn.external_source(cb, device=device, num_outputs=2, layout=["HWC", ""])
    filters = np.full((window_size, window_size), 1. / (window_size ** 2), dtype=np.float32)
    edges = fn.experimental.filter(images, filters)
    return edges, labels


@pipeline_def
def pipeline_gb(cb, device="gpu", window_size=3):
    images, labels = fn.external_source(cb, device=device, num_outputs=2)
    edges = fn.gaussian_blur(images, window_size=window_size)
    return edges, labels


def run_pipeline(pipe, epoch_size, batch_size, num_epochs=3):
    num_iters = epoch_size // batch_size
    speeds = []
    for epoch in range(num_epochs):
        start = time.time()
        for i in range(num_iters):
            try:
                pipe.run()
            except StopIteration:
                assert i == num_iters - 1
        pipe.reset()
        speeds.append(num_iters * batch_size / (time.time() - start))
    return speeds[-1]


def benchmark(pipeline, batch_size, window_size=3):
    device = "gpu"
    source = synth_imgs_data(data_path, batch_size=batch_size, device=device)
    pipe = pipeline(source, num_threads=4, batch_size=batch_size, device_id=0, device=device, window_size=window_size)
    pipe.build()
    return run_pipeline(pipe, 128 * 400, batch_size)


box, gb = [], []
for window_size in (3, 7, 11, 15, 51):
    box.append(benchmark(pipeline_box, 128, window_size=window_size))
    gb.append(benchmark(pipeline_gb, 128, window_size=window_size))
print(box, gb)
