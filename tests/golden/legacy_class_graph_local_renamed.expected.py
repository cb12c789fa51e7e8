# golden-verify: pipe=COCOPipeline kwargs={"batch_size": 3, "num_threads": 2, "device_id": None, "path": str(DATA / "coco" / "images"), "training": True, "annotations": str(DATA / "coco" / "annotations.json"), "world": 1, "mean": [123.7, 116.3, 103.5], "std": [58.4, 57.1, 57.4], "resize": [40, 48], "max_size": 64, "stride": 16} iterations=5
"""NVIDIA retinanet-examples' COCO pipeline (odtk/dali.py): __init__'s `resize` sets the range
of a random operator, and define_graph binds a `resize` of its own to what that operator draws."""
import secrets
from nvidia.dali import types
import nvidia.dali.experimental.dynamic as ndd


def COCOPipeline(batch_size, num_threads, path, training, annotations, world, device_id, mean, std, resize,
             max_size, stride, *, seed=42):
    'Dali pipeline for COCO'
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng = ndd.random.RNG(seed=seed_or_random)

    if isinstance(resize, list): resize = max(resize)

    padded_size = max_size + ((stride - max_size % stride) % stride)

    reader = ndd.readers.COCO(annotations_file=annotations, file_root=path, num_shards=world, shard_id=0, ltrb=True, ratio=True, shuffle_after_epoch=True, save_img_ids=True, seed=seed_or_random)
    while True:
        for images, bboxes, labels, img_ids in reader.next_epoch(batch_size=batch_size):
            with ctx:
                if training:
                    crop_begin, crop_size, bboxes, labels = ndd.random_bbox_crop(bboxes, labels, device='cpu', bbox_layout="xyXY", scaling=[0.3, 1.0], thresholds=[0.1, 0.3, 0.5, 0.7, 0.9], batch_size=batch_size, rng=rng)
                    images = ndd.decoders.image_slice(images, crop_begin, crop_size, device="gpu", output_type=types.RGB)
                    resize_2 = ndd.random.uniform(range=[resize, float(max_size)], batch_size=batch_size, rng=rng)
                    images, attrs = ndd.resize(images, resize_longer=resize_2, device='gpu', interp_type=types.DALIInterpType.INTERP_CUBIC, save_attrs=True)

                    flip = ndd.random.coin_flip(probability=0.5, batch_size=batch_size, rng=rng)
                    bboxes = ndd.bb_flip(bboxes, horizontal=flip, device='cpu', ltrb=True)
                    images = ndd.flip(images, horizontal=flip, device='gpu')

                else:
                    images = ndd.decoders.image(images, device="gpu", output_type=types.RGB)
                    images, attrs = ndd.resize(images, device='gpu', interp_type=types.DALIInterpType.INTERP_CUBIC, resize_longer=max_size, save_attrs=True)

                resized_images = images
                images = ndd.crop_mirror_normalize(ndd.paste(images, device='gpu', fill_value=0, ratio=1.1, min_canvas_size=padded_size, paste_x=0, paste_y=0), device='gpu', mean=mean, std=std, crop=(padded_size, padded_size), crop_pos_x=0, crop_pos_y=0)

                outputs = images, bboxes, labels, img_ids, attrs, resized_images
            yield outputs
