# golden-run: pipe=gpu_pipe args=(str(DATA / "images"),) iterations=12
import numpy as np
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


def sample_at(batch, i):
    """TensorList.at(i) on an ndd.Batch (added by dali-migrate): as in pipeline mode, a sample of a
    CPU batch is a numpy array, one of a GPU batch the sample itself."""
    sample = batch.select(i)
    return np.array(sample) if batch.device.device_type == "cpu" else sample


def gpu_pipe(data_dir, *, batch_size=4, num_threads=4, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=data_dir)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                images = ndd.resize(images, device="gpu", resize_x=32, resize_y=32)
                images = ndd.crop_mirror_normalize(
                    images,
                    dtype=types.FLOAT,
                    mean=[128.0, 128.0, 128.0],
                    std=[64.0, 64.0, 64.0],
                )
                outputs = images, labels.gpu()
            yield outputs


pipe = gpu_pipe("/data/images", device_id=1)
images, labels = next(pipe)
host = images.cpu()
print(sample_at(host, 0).shape, ndd.as_tensor(labels.cpu()))
