"""An argument read, or its name bound to a new object, after the pipeline is made: converts."""
from nvidia.dali import fn, pipeline_def


@pipeline_def(num_threads=2, device_id=None)
def list_pipe(files):
    jpegs, labels = fn.readers.file(files=files)
    return jpegs, labels


def only_read(files):
    pipe = list_pipe(files=files, batch_size=2)
    print(files.count(files[0]), len(files))
    files = files + files  # binds a new list: the pipeline keeps the one it was given
    pipe.build()
    return pipe.run(), files
