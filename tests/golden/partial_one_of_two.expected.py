from nvidia.dali import fn, pipeline_def
import nvidia.dali.experimental.dynamic as ndd


def good_pipe(root, *, batch_size=4, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=root)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                outputs = ndd.decoders.image(jpegs), labels
            yield outputs


# dali-migrate: [pipeline-def] pipeline not converted: fn.dl_tensor_python_function has no dynamic-mode counterpart: call the function on DLPack/torch views of the batch in the loop
@pipeline_def(batch_size=4, num_threads=1, exec_async=False, exec_pipelined=False)
def dlpack_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs)
    return images, fn.dl_tensor_python_function(images, function=lambda batch: batch)


good = good_pipe("/data")
other = dlpack_pipe("/data")
other.build()
print(next(good), other.run())
