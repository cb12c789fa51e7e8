# golden-run: pipe=simple_pipe args=(str(DATA / "images"),) iterations=12
from nvidia.dali import pipeline_def, fn, types


@pipeline_def(batch_size=4, num_threads=2, device_id=0)
def simple_pipe(data_dir):
    jpegs, labels = fn.readers.file(file_root=data_dir)
    images = fn.decoders.image(jpegs, device="cpu", output_type=types.RGB)
    images = fn.resize(images, resize_x=32, resize_y=32)
    return images, labels


pipe = simple_pipe("/data/images")
pipe.build()
for _ in range(3):
    images, labels = pipe.run()
    print(images.shape(), labels.as_tensor())
