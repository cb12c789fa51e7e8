"""A module-level helper whose global the function around the pipeline shadows: left as a call."""
from nvidia.dali import fn, pipeline_def

SIZE = 40


def shrink(img):
    return fn.resize(img, size=(SIZE, SIZE))


def make_shadowed(data_dir, batch_size):
    SIZE = 16  # shrink() reads the module's SIZE, not this one: it stays a call

    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=0)
    def small_pipe():
        jpegs, labels = fn.readers.file(file_root=data_dir)
        return shrink(fn.decoders.image(jpegs, device="mixed")), labels

    return small_pipe(), SIZE
