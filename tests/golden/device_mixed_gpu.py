# golden-run: pipe=gpu_pipe args=(str(DATA / "images"),) iterations=12
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import pipeline_def


@pipeline_def(batch_size=4, num_threads=4, device_id=0)
def gpu_pipe(data_dir):
    jpegs, labels = fn.readers.file(file_root=data_dir)
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, device="gpu", resize_x=32, resize_y=32)
    images = fn.crop_mirror_normalize(
        images,
        dtype=types.FLOAT,
        mean=[128.0, 128.0, 128.0],
        std=[64.0, 64.0, 64.0],
    )
    return images, labels.gpu()


pipe = gpu_pipe("/data/images", device_id=1)
pipe.build()
images, labels = pipe.run()
host = images.as_cpu()
print(host.at(0).shape, labels.as_cpu().as_tensor())
