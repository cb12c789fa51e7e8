from nvidia.dali import fn, pipeline_def


@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def two_views(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs)
    views = [fn.flip(images), images]
    # A list element, not per-sample slicing: which one is meant is left to a person.
    return views[0], labels
