# golden-run: pipe=commented_pipe args=(str(DATA / "images"),) iterations=12
# A data loader with many comments; they must all survive the conversion.
from nvidia.dali import fn, pipeline_def  # DALI imports

# The batch size used everywhere.
BATCH = 4


# The pipeline.
@pipeline_def(batch_size=BATCH, num_threads=1)  # four samples
def commented_pipe(root):
    """Decode and resize."""
    # Read the files.
    jpegs, labels = fn.readers.file(file_root=root)  # the reader

    # Decode them.
    images = fn.decoders.image(jpegs)

    # Make them small.
    images = fn.resize(images, resize_x=16, resize_y=16)  # tiny
    # Done.
    return images, labels  # two outputs


# Build and run.
pipe = commented_pipe("/data/images")
pipe.build()  # no longer needed after conversion
out = pipe.run()  # one batch
