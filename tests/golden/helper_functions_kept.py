"""A helper that code outside the pipelines also calls: the pipeline converts, the helper stays."""
from nvidia.dali import fn, pipeline_def, types


def decode_and_resize(jpegs, size):
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, resize_x=size, resize_y=size)
    return images


@pipeline_def(batch_size=8, num_threads=4, device_id=0)
def eval_pipe(data_dir, size=224):
    jpegs, labels = fn.readers.file(file_root=data_dir, name="Reader")
    images = decode_and_resize(jpegs, size)
    return images, labels


def build_preview_pipe(data_dir):
    pipe = pipeline_def(batch_size=1, num_threads=1, device_id=0)(preview)
    return pipe(data_dir)


def preview(data_dir):
    jpegs, _ = fn.readers.file(file_root=data_dir)
    return decode_and_resize(jpegs, 64)


if __name__ == "__main__":
    pipe = eval_pipe("/data/val")
    pipe.build()
    images, labels = pipe.run()
