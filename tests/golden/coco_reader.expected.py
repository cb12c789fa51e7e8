# golden-run: pipe=coco_pipe args=(str(DATA / "coco" / "images"), str(DATA / "coco" / "annotations.json")) iterations=6
from nvidia.dali import types
import nvidia.dali.experimental.dynamic as ndd


def coco_pipe(file_root, annotations_file, *, batch_size=3, num_threads=2, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.COCO(
        file_root=file_root,
        annotations_file=annotations_file,
        ltrb=True,
        polygon_masks=True,
        skip_empty=True,
    )
    while True:
        for inputs, bboxes, labels, polygons, vertices in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(inputs, device="gpu", output_type=types.RGB)
                outputs = images, bboxes, labels, polygons, vertices
            yield outputs
