from nvidia.dali import fn, pipeline_def


# dali-migrate: [pipeline-def] pipeline not converted: cannot tell whether fn.readers.webdataset gives one output or several here: unpack its outputs (`a, b = fn.readers.webdataset(...)`) or convert by hand
@pipeline_def(batch_size=4, num_threads=1)
def wds_images(tar):
    # One extension: one output here, but a list of outputs with several.
    jpegs = fn.readers.webdataset(paths=[tar], ext=["jpg"])
    return fn.decoders.image(jpegs)


# dali-migrate: [pipeline-def] pipeline not converted: cannot tell whether fn.readers.coco gives one output or several here: unpack its outputs (`a, b = fn.readers.coco(...)`) or convert by hand
@pipeline_def(batch_size=4, num_threads=1)
def coco_all(file_root, annotations_file):
    outputs = fn.readers.coco(file_root=file_root, annotations_file=annotations_file)
    return fn.decoders.image(outputs[0]), outputs[1], outputs[2]
