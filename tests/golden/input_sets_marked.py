"""DALI's resize notebook: an operator given a list of DALI data applies to each item in pipeline
mode (input sets); dynamic mode raises on a list, so that pipeline stays. The pipeline beside it,
whose list holds Python values (a constant input), converts."""
import nvidia.dali.fn as fn
from nvidia.dali import pipeline_def


@pipeline_def(batch_size=8, num_threads=3, device_id=0)
def resize_pipe(db_folder, widths):
    files, labels = fn.readers.caffe(path=db_folder, random_shuffle=True, seed=1234)
    images = fn.decoders.image(files, device="mixed")
    out = [
        fn.resize(images, resize_x=widths),
        fn.resize(images, resize_x=widths, subpixel_scale=False),
    ]
    # pad the batch to uniform size
    out = fn.pad(out, fill_value=255)
    return tuple(out)


@pipeline_def(batch_size=8, num_threads=3, device_id=0)
def crop_pipe(db_folder):
    files, labels = fn.readers.caffe(path=db_folder)
    images = fn.decoders.image(files)
    return fn.slice(images, [0.25, 0.25], [0.5, 0.5], normalized_anchor=True, normalized_shape=True), labels
