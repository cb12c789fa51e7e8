# golden-run: pipe=coco_pipe args=(str(DATA / "coco" / "images"), str(DATA / "coco" / "annotations.json")) iterations=6
from nvidia.dali import fn, pipeline_def, types


@pipeline_def(batch_size=3, num_threads=2, device_id=0)
def coco_pipe(file_root, annotations_file):
    inputs, bboxes, labels, polygons, vertices = fn.readers.coco(
        file_root=file_root,
        annotations_file=annotations_file,
        ltrb=True,
        polygon_masks=True,
        skip_empty=True,
        name="Reader",
    )
    images = fn.decoders.image(inputs, device="mixed", output_type=types.RGB)
    return images, bboxes, labels, polygons, vertices
