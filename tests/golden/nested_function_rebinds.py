from nvidia.dali import fn, pipeline_def


@pipeline_def(batch_size=4, num_threads=1)
def closure_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root)
    return fn.decoders.image(jpegs), labels


pipe = closure_pipe("/data")
pipe.build()


def next_batch():
    images, labels = pipe.run()
    return images


def reset():
    pipe = closure_pipe("/other")
    pipe.build()
    return pipe.run()
