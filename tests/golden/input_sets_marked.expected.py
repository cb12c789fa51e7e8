"""DALI's resize notebook: an operator given a list of DALI data applies to each item in pipeline
mode (input sets); dynamic mode raises on a list, so that pipeline stays. The pipeline beside it,
whose list holds Python values (a constant input), converts."""
import nvidia.dali.fn as fn
from nvidia.dali import pipeline_def
import nvidia.dali.experimental.dynamic as ndd


# dali-migrate: [pipeline-def] pipeline not converted: fn.pad is given a list of DALI data as one input (`out`): the pipeline applied it to each item (input sets), dynamic mode takes one batch per input and raises on a list; call it on each item (`[ndd.pad(x, ...) for x in items]`) by hand
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


def crop_pipe(db_folder, *, batch_size=8, num_threads=3, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.Caffe(path=db_folder)
    while True:
        for files, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(files)
                outputs = ndd.slice(images, [0.25, 0.25], [0.5, 0.5], normalized_anchor=True, normalized_shape=True), labels
            yield outputs
