import nvidia.dali.experimental.dynamic as ndd


def paired_pipe(images_root, masks_root, *, batch_size=4, num_threads=2, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=images_root)
    reader_2 = ndd.readers.File(file_root=masks_root)

    # one batch of each reader per iteration, each going on into its next epoch on its own, as in a pipeline
    def endless(reader):
        while True:
            yield from reader.next_epoch(batch_size=batch_size)

    for (jpegs, labels), (masks, _) in zip(endless(reader), endless(reader_2)):
        with ctx:
            images = ndd.decoders.image(jpegs)
            masks = ndd.decoders.image(masks)
            outputs = images, masks, labels
        yield outputs


pipe = paired_pipe("/data/images", "/data/masks")
images, masks, labels = next(pipe)
