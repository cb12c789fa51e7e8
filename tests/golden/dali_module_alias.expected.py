# golden-run: pipe=alias_pipe args=(str(DATA / "images"),) iterations=12
import numpy as np
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


def alias_pipe(root, *, batch_size=4, num_threads=2, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=root)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, output_type=types.RGB)
                images = ndd.resize(images, resize_shorter=20)
                images = ndd.crop_mirror_normalize(
                    images,
                    crop=(16, 16),
                    mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                    std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
                    dtype=types.FLOAT,
                    output_layout="CHW",
                )
                outputs = images, labels
            yield outputs


if __name__ == "__main__":
    pipe = alias_pipe("/data/images")
    images, labels = next(pipe)
    print(np.array(images.select(0)).shape)
