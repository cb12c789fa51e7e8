from nvidia.dali import fn, pipeline_def


# dali-migrate: [pipeline-def] not converted: some uses of this pipeline in this file need a person (see the markers there)
@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def files(root):
    jpegs, labels = fn.readers.file(file_root=root)
    return jpegs, labels


def first_labels(train_root, val_root):
    pipe = files(train_root)
    pipe.build()
    train_jpegs, train_labels = pipe.run()
    pipe = files(val_root)
    pipe.build()
    val_jpegs, val_labels = pipe.run()
    # Which pipeline gave which outputs is only known by position here: left to a person.
    # dali-migrate: [call-site] `train_labels` may still hold outputs of the pipeline `pipe` held before it was assigned again: convert by hand
    return train_labels, val_labels


def each_root(roots):
    pipe = None
    for r in roots:
        if pipe is not None:
            pipe.run()  # the pipeline of the previous round: not followed
        # dali-migrate: [call-site] `pipe` is assigned more than once: dali-migrate cannot follow which pipeline it holds
        pipe = files(r)
        pipe.build()
