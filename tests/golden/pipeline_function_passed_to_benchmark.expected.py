# golden-run: pipe=pipeline_box args=(str(DATA / "images"),) kwargs={"batch_size": 4, "window_size": 5, "device": "cpu"} iterations=8
"""Pipeline functions handed to a benchmark helper of the file, which makes a pipeline of the one
it gets, builds it and times its runs, as DALI's convolution benchmark notebook (conv_perf) does."""
import time

import numpy as np
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd

data_path = "/data/imagenet/train"


def pipeline_box(file_root, device="gpu", window_size=3, *, batch_size, num_threads=None, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=file_root)
    filters = np.full((window_size, window_size), 1. / (window_size ** 2), dtype=np.float32)

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        while True:
            for jpegs, labels in reader.next_epoch(batch_size=batch_size):
                with ctx:
                    images = ndd.decoders.image(jpegs, device="cpu" if device == "cpu" else "gpu", output_type=types.RGB)
                    edges = ndd.filter(images, filters)
                    outputs = edges, labels
                yield outputs

    return batches()


def pipeline_gb(file_root, device="gpu", window_size=3, *, batch_size, num_threads=None, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=file_root)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="cpu" if device == "cpu" else "gpu", output_type=types.RGB)
                edges = ndd.gaussian_blur(images, window_size=window_size)
                outputs = edges, labels
            yield outputs


def run_pipeline(pipe, num_iters, batch_size):
    start = time.time()
    for _ in range(num_iters):
        next(pipe)
    return batch_size * num_iters / (time.time() - start)


def benchmark(pipeline, batch_size, window_size=3):
    device = "gpu"
    pipe = pipeline(data_path, num_threads=4, batch_size=batch_size, device_id=0, device=device, window_size=window_size)
    return run_pipeline(pipe, 100, batch_size)


box, gb = [], []
for window_size in (3, 7, 11, 15, 51):
    box.append(benchmark(pipeline_box, 128, window_size=window_size))
    gb.append(benchmark(pipeline_gb, 128, window_size=window_size))
print(box, gb)
