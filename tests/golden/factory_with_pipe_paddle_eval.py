# golden-run: pipe=create_val_pipeline args=(str(DATA / "images"), 4) kwargs={"crop": 48, "resize_shorter": 64, "shard_id": 1, "num_shards": 2} iterations=8
"""Evaluation and inference data for a Paddle ResNet, read with DALI: the pipeline is built by hand
in a function that both loaders call."""
import os

import paddle
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin.paddle import DALIGenericIterator, LastBatchPolicy


def create_val_pipeline(data_dir, batch_size, num_threads=4, device_id=0, resize_shorter=256, crop=224,
                        shard_id=0, num_shards=1, data_format="NCHW"):
    pipeline = Pipeline(batch_size, num_threads, device_id, seed=42)
    with pipeline:
        jpegs, labels = fn.readers.file(file_root=data_dir,
                                        shard_id=shard_id,
                                        num_shards=num_shards,
                                        random_shuffle=False,
                                        pad_last_batch=True,
                                        name="Reader")
        output_layout = "HWC" if data_format == "NHWC" else "CHW"
        images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
        images = fn.resize(images, resize_shorter=resize_shorter, interp_type=types.INTERP_LINEAR)
        images = fn.crop_mirror_normalize(images,
                                          dtype=types.FLOAT,
                                          output_layout=output_layout,
                                          crop=(crop, crop),
                                          mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                          std=[0.229 * 255, 0.224 * 255, 0.225 * 255])
        labels = fn.cast(labels.gpu(), dtype=types.INT64)
        pipeline.set_outputs(images, labels)
    return pipeline


def build_eval_loader(args, device):
    device_id = int(device.split(":")[1])
    file_root = os.path.join(args.data_dir, "val")
    trainer_id = paddle.distributed.get_rank()
    num_trainers = paddle.distributed.get_world_size()
    pipe = create_val_pipeline(file_root, args.batch_size,
                               num_threads=args.num_threads,
                               device_id=device_id,
                               crop=args.crop_size,
                               resize_shorter=args.resize_short,
                               shard_id=trainer_id,
                               num_shards=num_trainers)
    pipe.build()
    return DALIGenericIterator(pipe, ["data", "label"], reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL)


def build_infer_loader(image_dir, batch_size=1):
    pipe = create_val_pipeline(image_dir, batch_size, crop=64, resize_shorter=72, data_format="NHWC")
    pipe.build()
    return DALIGenericIterator([pipe], ["image", "label"], reader_name="Reader")


def evaluate(model, args):
    loader = build_eval_loader(args, paddle.device.get_device())
    model.eval()
    correct = total = 0
    for batch in loader:
        logits = model(batch[0]["data"])
        label = paddle.to_tensor(batch[0]["label"])
        correct += int((logits.argmax(axis=1) == label.squeeze(1)).sum())
        total += label.shape[0]
    return correct / total
