import nvidia.dali.experimental.dynamic as ndd


def train_pipe(root, *, batch_size=4, num_threads=None, device_id=None, seed=None):
    if num_threads is not None:
        ndd.set_num_threads(num_threads)
    reader = ndd.readers.File(file_root=root)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            images = ndd.decoders.image(jpegs)
            yield images, labels


pipe = train_pipe("/data")
images, labels = next(pipe)
