"""A module-level helper whose global the function around the pipeline shadows: left as a call."""
from nvidia.dali import fn, pipeline_def

SIZE = 40


# dali-migrate: [not-yet-converted] shrink() builds DALI operators with fn.*, which only works inside a pipeline: convert it with the pipelines that call it (ndd calls, batch_size= on random ops)
def shrink(img):
    return fn.resize(img, size=(SIZE, SIZE))


def make_shadowed(data_dir, batch_size):
    SIZE = 16  # shrink() reads the module's SIZE, not this one: it stays a call

    # dali-migrate: [pipeline-def] pipeline not converted: calls shrink(), which builds DALI operators itself and cannot be written into the pipeline: shrink() reads `SIZE` from the module, a name make_shadowed() binds too: written into the pipeline, it would read make_shadowed()'s; convert by hand
    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=0)
    def small_pipe():
        jpegs, labels = fn.readers.file(file_root=data_dir)
        return shrink(fn.decoders.image(jpegs, device="mixed")), labels

    return small_pipe(), SIZE
