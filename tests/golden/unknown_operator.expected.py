import nvidia.dali.plugin_manager as plugin_manager
from nvidia.dali import fn, pipeline_def

plugin_manager.load_library("./libcustomdummy.so")


# dali-migrate: [pipeline-def] pipeline not converted: fn.custom_dummy is not a DALI 2.4.0 operator known to dali-migrate (a plugin's, loaded with plugin_manager.load_library, or another DALI version's): its outputs and devices cannot be told; dynamic mode has a plugin's operators (ndd.custom_dummy) only where the plugin is loaded before dynamic mode is first imported (it makes its operators once, at import): convert by hand
@pipeline_def(batch_size=4, num_threads=1)
def custom_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs)
    images = fn.custom_dummy(images)
    return images, labels


pipe = custom_pipe("/data")
pipe.build()
pipe.run()
