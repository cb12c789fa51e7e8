# golden-run: pipe=commented_pipe args=(str(DATA / "images"),) iterations=12
# A data loader with many comments; they must all survive the conversion.
import nvidia.dali.experimental.dynamic as ndd

# The batch size used everywhere.
BATCH = 4


# The pipeline.
# four samples
def commented_pipe(root, *, batch_size=BATCH, num_threads=1, device_id=None, seed=None):
    """Decode and resize."""
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    # Read the files.
    reader = ndd.readers.File(file_root=root)  # the reader
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                # Decode them.
                images = ndd.decoders.image(jpegs)

                # Make them small.
                images = ndd.resize(images, resize_x=16, resize_y=16)  # tiny
                # Done.
                outputs = images, labels  # two outputs
            yield outputs


# Build and run.
pipe = commented_pipe("/data/images")
out = next(pipe)  # one batch
