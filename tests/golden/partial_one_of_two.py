from nvidia.dali import fn, pipeline_def


@pipeline_def(batch_size=4, num_threads=1)
def good_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root)
    return fn.decoders.image(jpegs), labels


@pipeline_def(batch_size=4, num_threads=1, exec_async=False, exec_pipelined=False)
def dlpack_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs)
    return images, fn.dl_tensor_python_function(images, function=lambda batch: batch)


good = good_pipe("/data")
good.build()
other = dlpack_pipe("/data")
other.build()
print(good.run(), other.run())
