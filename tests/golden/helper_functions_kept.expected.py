"""A helper that code outside the pipelines also calls: the pipeline converts, the helper stays."""
from nvidia.dali import fn, pipeline_def, types
import nvidia.dali.experimental.dynamic as ndd


# dali-migrate: [not-yet-converted] decode_and_resize() builds DALI operators with fn.*, which only works inside a pipeline: convert it with the pipelines that call it (ndd calls, batch_size= on random ops)
def decode_and_resize(jpegs, size):
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, resize_x=size, resize_y=size)
    return images


def eval_pipe(data_dir, size=224, *, batch_size=8, num_threads=4, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=data_dir)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images_2 = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                images_2 = ndd.resize(images_2, resize_x=size, resize_y=size)
                images = images_2
                outputs = images, labels
            yield outputs


def build_preview_pipe(data_dir):
    pipe = pipeline_def(batch_size=1, num_threads=1, device_id=0)(preview)
    return pipe(data_dir)


# dali-migrate: [not-yet-converted] preview() builds DALI operators with fn.*, which only works inside a pipeline: convert it with the pipelines that call it (ndd calls, batch_size= on random ops)
def preview(data_dir):
    jpegs, _ = fn.readers.file(file_root=data_dir)
    return decode_and_resize(jpegs, 64)


if __name__ == "__main__":
    pipe = eval_pipe("/data/val")
    images, labels = next(pipe)
