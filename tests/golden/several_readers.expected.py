from nvidia.dali import fn, pipeline_def


# dali-migrate: [pipeline-def] pipeline not converted: the pipeline has several readers: their epochs end at different times, so one loop cannot keep their order; convert by hand
@pipeline_def(batch_size=4, num_threads=2)
def paired_pipe(images_root, masks_root):
    jpegs, labels = fn.readers.file(file_root=images_root, name="Images")
    masks, _ = fn.readers.file(file_root=masks_root, name="Masks")
    images = fn.decoders.image(jpegs)
    masks = fn.decoders.image(masks)
    return images, masks, labels


pipe = paired_pipe("/data/images", "/data/masks")
pipe.build()
images, masks, labels = pipe.run()
