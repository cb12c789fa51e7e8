from nvidia.dali import fn, pipeline_def


# dali-migrate: [pipeline-def] not converted: some uses of this pipeline in this file need a person (see the markers there)
@pipeline_def(batch_size=4, num_threads=1)
def closure_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root)
    return fn.decoders.image(jpegs), labels


pipe = closure_pipe("/data")
pipe.build()


# dali-migrate: [call-site] a nested function uses the pipeline `pipe` or its outputs: convert by hand
def next_batch():
    images, labels = pipe.run()
    return images


def reset():
    pipe = closure_pipe("/other")
    pipe.build()
    return pipe.run()
