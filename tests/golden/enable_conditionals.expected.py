from nvidia.dali import fn, pipeline_def, types
import nvidia.dali.experimental.dynamic as ndd


# dali-migrate: [pipeline-def] pipeline not converted: enable_conditionals=True makes `if` on data per-sample; convert the conditionals by hand (not automated yet)
@pipeline_def(batch_size=4, num_threads=1, enable_conditionals=True)
def cond_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    if labels == 0:
        images = fn.flip(images, horizontal=1)
    else:
        images = fn.flip(images, vertical=1)
    return images, labels


def plain_pipe(root, *, batch_size=4, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=root)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size, ctx=ctx):
            with ctx:
                outputs = ndd.decoders.image(jpegs), labels
            yield outputs
