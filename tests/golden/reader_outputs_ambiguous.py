from nvidia.dali import fn, pipeline_def


@pipeline_def(batch_size=4, num_threads=1)
def wds_images(tar):
    # One extension: one output here, but a list of outputs with several.
    jpegs = fn.readers.webdataset(paths=[tar], ext=["jpg"])
    return fn.decoders.image(jpegs)


@pipeline_def(batch_size=4, num_threads=1)
def coco_all(file_root, annotations_file):
    outputs = fn.readers.coco(file_root=file_root, annotations_file=annotations_file)
    return fn.decoders.image(outputs[0]), outputs[1], outputs[2]
