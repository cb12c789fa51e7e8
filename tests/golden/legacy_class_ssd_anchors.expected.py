# golden-verify: pipe=COCOPipeline args=(4, str(DATA / "coco" / "images"), str(DATA / "coco" / "annotations.json")) kwargs={"device_id": None, "num_shards": 1, "num_threads": 2} iterations=4
"""NVIDIA DeepLearningExamples' SSD input pipeline (PyTorch/Detection/SSD/ssd/coco_pipeline.py):
the box encoder's anchors come from a torch tensor, read once when the pipeline is made."""
import torch
import secrets
import numpy as np

# DALI imports
import nvidia.dali as dali
import nvidia.dali.experimental.dynamic as ndd


class DefaultBoxes:
    """SSD's default boxes (the project makes 8732 of them for 300x300 inputs; a few here)."""

    def __init__(self, fig_size=300, steps=(100, 300), scales=(60, 180)):
        boxes = []
        for step, scale in zip(steps, scales):
            for i in range(fig_size // step):
                for j in range(fig_size // step):
                    cx, cy, s = (j + 0.5) * step / fig_size, (i + 0.5) * step / fig_size, scale / fig_size
                    boxes.append((cx, cy, s, s))
        self.dboxes = torch.tensor(boxes, dtype=torch.float).clamp(min=0, max=1)
        self.dboxes_ltrb = self.dboxes.clone()
        self.dboxes_ltrb[:, 0] = self.dboxes[:, 0] - 0.5 * self.dboxes[:, 2]
        self.dboxes_ltrb[:, 1] = self.dboxes[:, 1] - 0.5 * self.dboxes[:, 3]
        self.dboxes_ltrb[:, 2] = self.dboxes[:, 0] + 0.5 * self.dboxes[:, 2]
        self.dboxes_ltrb[:, 3] = self.dboxes[:, 1] + 0.5 * self.dboxes[:, 3]

    def __call__(self, order="ltrb"):
        if order == "ltrb":
            return self.dboxes_ltrb
        if order == "xywh":
            return self.dboxes


def COCOPipeline(batch_size, file_root, annotations_file, default_boxes=DefaultBoxes(),
             device_id=0, num_shards=1,
             output_fp16=False, output_nhwc=False, pad_output=False,
             num_threads=1, seed=15):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng = ndd.random.RNG(seed=seed_or_random)

    if torch.distributed.is_initialized():
        shard_id = torch.distributed.get_rank()
    else:
        shard_id = 0
    ## Cropping and normalization
    dtype = dali.types.FLOAT16 if output_fp16 else dali.types.FLOAT
    output_layout = dali.types.NHWC if output_nhwc else dali.types.NCHW

    # bbox encoder
    anchors = default_boxes(order='ltrb').cpu().numpy().flatten().tolist()

    # Data loader and image decoder
    reader = ndd.readers.COCO(file_root=file_root, annotations_file=annotations_file, shard_id=shard_id, num_shards=num_shards, ratio=True, ltrb=True, shuffle_after_epoch=True, skip_empty=True, seed=seed_or_random)

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        while True:
            for inputs, bboxes, labels in reader.next_epoch(batch_size=batch_size):
                with ctx:
                    # Random variables
                    saturation = ndd.random.uniform(range=[0.5, 1.5], batch_size=batch_size, rng=rng)
                    contrast = ndd.random.uniform(range=[0.5, 1.5], batch_size=batch_size, rng=rng)
                    brightness = ndd.random.uniform(range=[0.875, 1.125], batch_size=batch_size, rng=rng)
                    hue = ndd.random.uniform(range=[-0.5, 0.5], batch_size=batch_size, rng=rng)
                    coin_rnd = ndd.random.coin_flip(probability=0.5, batch_size=batch_size, rng=rng)
                    # Augumentation techniques
                    ## Random crop
                    crop_begin, crop_size, bboxes, labels = ndd.random_bbox_crop(bboxes, labels, device="cpu", aspect_ratio=[0.5, 2.0], thresholds=[0, 0.1, 0.3, 0.5, 0.7, 0.9], scaling=[0.3, 1.0], bbox_layout="xyXY", allow_no_crop=True, num_attempts=1, batch_size=batch_size, rng=rng)
                    images = ndd.decoders.image_slice(inputs, crop_begin, crop_size, device="cpu", output_type=dali.types.RGB)

                    ## Flipping
                    images = ndd.flip(images, horizontal=coin_rnd, device="cpu")
                    bboxes = ndd.bb_flip(bboxes, horizontal=coin_rnd, device="cpu", ltrb=True)
                    # Resize
                    images = ndd.resize(images, device="cpu", resize_x=300, resize_y=300)
                    images = images.gpu()

                    ## Color twist
                    # use float to avoid clipping and quantizing the intermediate result
                    images = ndd.hsv(images, hue=hue, saturation=saturation, device="gpu", dtype=dali.types.FLOAT)
                    # input is in the [0, 255] range
                    images = ndd.brightness_contrast(images, brightness=brightness, contrast=contrast, device="gpu", contrast_center=128, dtype=dali.types.UINT8)

                    images = ndd.crop_mirror_normalize(images, device="gpu", crop=(300, 300), mean=[0.0, 0.0, 0.0], std=[255.0, 255.0, 255.0], mirror=0, dtype=dtype, output_layout=output_layout, pad_output=pad_output)
                    bboxes, labels = ndd.box_encoder(bboxes, labels, device="cpu", criteria=0.5, anchors=anchors)

                    # bboxes and images and labels on GPU
                    outputs = (images, bboxes.gpu(), labels.gpu())
                yield outputs

    return batches()


if __name__ == "__main__":
    pipe = COCOPipeline(32, "/coco/train2017", "/coco/annotations/instances_train2017.json",
                        DefaultBoxes(), device_id=0, num_shards=1)
    images, bboxes, labels = next(pipe)
    print(np.array(ndd.as_tensor(images.cpu())).shape)
