# golden-run: pipe=commented_pipe args=(str(DATA / "images"),) iterations=12
# A data loader with many comments; they must all survive the conversion.
import nvidia.dali.experimental.dynamic as ndd

# The batch size used everywhere.
BATCH = 4


# The pipeline.
# four samples
def commented_pipe(root, *, batch_size=BATCH, num_threads=1, device_id=None, seed=None):
    """Decode and resize."""
    ndd.set_num_threads(num_threads)
    # Read the files.
    reader = ndd.readers.File(file_root=root)  # the reader
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            # Decode them.
            images = ndd.decoders.image(jpegs)

            # Make them small.
            images = ndd.resize(images, resize_x=16, resize_y=16)  # tiny
            # Done.
            yield images, labels  # two outputs


# Build and run.
pipe = commented_pipe("/data/images")
out = next(pipe)  # one batch
