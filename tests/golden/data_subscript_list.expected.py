from nvidia.dali import fn, pipeline_def


# dali-migrate: [pipeline-def] pipeline not converted: `views[0]`: cannot tell whether this indexes DALI data (per-sample slicing, `.slice[...]` in dynamic mode) or a Python value: convert by hand
@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def two_views(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs)
    views = [fn.flip(images), images]
    # A list element, not per-sample slicing: which one is meant is left to a person.
    return views[0], labels
