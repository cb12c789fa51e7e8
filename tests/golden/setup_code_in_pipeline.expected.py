# golden-run: pipe=normalize_pipe args=(str(DATA / "images"),) kwargs={"size": 20} iterations=12
import os

from nvidia.dali import types
import nvidia.dali.experimental.dynamic as ndd

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


def normalize_pipe(root, size=32, *, batch_size=4, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    mean = [m * 255 for m in MEAN]
    std = [s * 255 for s in STD]
    root = os.path.abspath(root)
    reader = ndd.readers.File(file_root=root)

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        while True:
            for jpegs, labels in reader.next_epoch(batch_size=batch_size):
                with ctx:
                    images = ndd.decoders.image(jpegs, output_type=types.RGB)
                    images = ndd.resize(images, resize_x=size, resize_y=size)
                    images = ndd.crop_mirror_normalize(images, mean=mean, std=std, dtype=types.FLOAT, output_layout="HWC")
                    outputs = images, labels
                yield outputs

    return batches()
