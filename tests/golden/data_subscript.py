# golden-run: pipe=crops args=(str(DATA / "images"),) kwargs={"batch_size": 3} iterations=4
from nvidia.dali import fn, pipeline_def, types


@pipeline_def(num_threads=2, device_id=None)
def crops(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    images = fn.resize(images, resize_x=32, resize_y=24)
    red = images[:, :, 0]                 # one channel of every image
    corner = images[2:10, 4:12]           # the same window of every image
    flipped = images[::-1]                # rows reversed
    return red, corner, flipped, labels[0]
