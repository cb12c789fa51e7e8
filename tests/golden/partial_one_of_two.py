from nvidia.dali import fn, pipeline_def


@pipeline_def(batch_size=4, num_threads=1)
def good_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root)
    return fn.decoders.image(jpegs), labels


@pipeline_def(batch_size=4, num_threads=1)
def shapes_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs)
    return images, fn.shapes(images)


good = good_pipe("/data")
good.build()
other = shapes_pipe("/data")
other.build()
print(good.run(), other.run())
