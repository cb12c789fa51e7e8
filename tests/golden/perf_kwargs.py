# golden-run: pipe=fast_pipe args=(str(DATA / "images"),) iterations=12
from nvidia.dali import fn, pipeline_def


@pipeline_def(batch_size=4, num_threads=2, prefetch_queue_depth=2, exec_async=False, exec_pipelined=False)
def fast_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root, prefetch_queue_depth=2)
    images = fn.decoders.image(jpegs)
    return fn.resize(images, resize_x=12, resize_y=12), labels


pipe = fast_pipe("/data", prefetch_queue_depth={"cpu_size": 2, "gpu_size": 3}, exec_dynamic=True, set_affinity=True)
pipe.build()
pipe.run()
