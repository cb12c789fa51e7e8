# golden-run: pipe=thumbnail_pipe args=(str(DATA / "images"),) iterations=12
"""Thumbnails for a preview grid: the pipeline's one output is held in a variable, then returned."""
from nvidia.dali import fn, pipeline_def, types


@pipeline_def(batch_size=4, num_threads=2, device_id=0)
def thumbnail_pipe(image_dir, size=48):
    jpegs, _ = fn.readers.file(file_root=image_dir, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    thumbnails = fn.resize(images, resize_x=size, resize_y=size)
    return thumbnails


if __name__ == "__main__":
    pipe = thumbnail_pipe("/data/previews")
    pipe.build()
    (thumbnails,) = pipe.run()
    print(thumbnails.as_cpu().as_array().shape)
