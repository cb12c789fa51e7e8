# golden-run: pipe=pipeline_box iterations=4
"""fn.external_source(source, num_outputs) given by position, as general/conv_perf.ipynb writes it;
several sources in one pipeline are drawn every iteration."""
import numpy as np
import nvidia.dali.experimental.dynamic as ndd

BATCH = 2


def synth_imgs_data():
    k = 0
    while True:
        images = [np.full((4, 5, 3), k + i, dtype=np.uint8) for i in range(BATCH)]
        labels = [np.array([k % 7 + i], dtype=np.int32) for i in range(BATCH)]
        yield images, labels
        k += 1


def offsets():
    for k in range(4):
        yield [np.full((1,), k, dtype=np.float32)] * BATCH, [np.full((1,), -k, dtype=np.float32)] * BATCH


def pipeline_box(window_size=3, *, batch_size=BATCH, num_threads=4, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    filters = np.full((window_size, window_size), 1.0 / (window_size**2), dtype=np.float32)
    end = object()
    source = synth_imgs_data
    source_iter = source()
    source_2 = offsets
    source_iter_2 = source_2()

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        while True:
            source_data = next(source_iter, end)
            source_data_2 = next(source_iter_2, end)
            if source_data is end or source_data_2 is end:
                return
            with ctx:
                images, labels = ndd.batch(source_data[0], layout="HWC"), ndd.batch(source_data[1])
                low, high = ndd.batch(source_data_2[0]), ndd.batch(source_data_2[1])
                edges = ndd.filter(images, filters)
                outputs = edges, labels, low + high
            yield outputs

    return batches()


if __name__ == "__main__":
    pipe = pipeline_box(window_size=3)
    edges, labels, offset = next(pipe)
