# golden-verify: pipe=flip_pipe args=(str(DATA / "coco" / "images"), str(DATA / "coco" / "annotations.json")) iterations=6
"""The conditionals example of DALI's documentation: flip an image and its boxes together."""
from nvidia.dali import fn, pipeline_def, types


@pipeline_def(batch_size=3, num_threads=2, device_id=0, seed=7, enable_conditionals=True)
def flip_pipe(file_root, annotations_file):
    jpegs, bboxes, labels = fn.readers.coco(
        file_root=file_root, annotations_file=annotations_file, ltrb=True, skip_empty=True, random_shuffle=True, name="Reader"
    )
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    if fn.random.coin_flip(probability=0.5):
        images = fn.flip(images, horizontal=1)
        bboxes = fn.bb_flip(bboxes, ltrb=True)
    images = fn.resize(images, resize_x=48, resize_y=48)
    return images, bboxes, labels
