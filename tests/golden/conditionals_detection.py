# golden-run: pipe=detection_pipe args=(str(DATA / "coco" / "images"), str(DATA / "coco" / "annotations.json")) iterations=6
"""SSD-style input: images smaller than the training size are zoomed out (DALI conditionals)."""
from nvidia.dali import fn, pipeline_def, types


@pipeline_def(batch_size=3, num_threads=2, device_id=0, enable_conditionals=True)
def detection_pipe(file_root, annotations_file, size=64):
    jpegs, bboxes, labels = fn.readers.coco(
        file_root=file_root, annotations_file=annotations_file, ltrb=True, skip_empty=True, name="Reader"
    )
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    longest = fn.reductions.max(fn.peek_image_shape(jpegs))
    if longest < 60:
        images = fn.paste(images, ratio=1.25, fill_value=(104, 117, 123))
        bboxes = fn.bbox_paste(bboxes, ratio=1.25, ltrb=True)
    images = fn.resize(images, resize_x=size, resize_y=size)
    return images, bboxes, labels
