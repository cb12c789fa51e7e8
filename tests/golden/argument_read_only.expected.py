"""An argument read, or its name bound to a new object, after the pipeline is made: converts."""
import nvidia.dali.experimental.dynamic as ndd


def list_pipe(files, *, batch_size, num_threads=2, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(files=files)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                outputs = jpegs, labels
            yield outputs


def only_read(files):
    pipe = list_pipe(files=files, batch_size=2)
    print(files.count(files[0]), len(files))
    files = files + files  # binds a new list: the pipeline keeps the one it was given
    return next(pipe), files
