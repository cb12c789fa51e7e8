import nvidia.dali.plugin_manager as plugin_manager
from nvidia.dali import fn, pipeline_def

plugin_manager.load_library("./libcustomdummy.so")


@pipeline_def(batch_size=4, num_threads=1)
def custom_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs)
    images = fn.custom_dummy(images)
    return images, labels


pipe = custom_pipe("/data")
pipe.build()
pipe.run()
