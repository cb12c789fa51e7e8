# golden-verify: pipe=create_dali_pipeline args=(str(DATA / "images"), 48, 64, 0, 1) kwargs=dict(batch_size=4, dali_cpu=True) iterations=6
# golden-verify: pipe=create_dali_pipeline args=(str(DATA), 48, 64, 0, 1) kwargs=dict(batch_size=4, dali_cpu=True, file_list=str(DATA / "images_list.txt"), is_training=False) iterations=6
# golden-verify: pipe=create_dali_pipeline args=(str(DATA / "images"), 48, 64, 0, 2) kwargs=dict(batch_size=3, dali_cpu=True, is_training=False) iterations=5
"""ImageNet loaders in the style of DALI's ResNet-50 example: a file list, when given, picks the
reader's arguments; validation shards stick to their shard."""
import argparse

from nvidia.dali import fn, pipeline_def, types
from nvidia.dali.plugin.pytorch import DALIClassificationIterator, LastBatchPolicy


@pipeline_def
def create_dali_pipeline(data_dir, crop, size, shard_id, num_shards, file_list=None, dali_cpu=False, is_training=True):
    if file_list is not None:
        # a subset of the images, listed with their labels
        images, labels = fn.readers.file(file_root=data_dir,
                                         file_list=file_list,
                                         shard_id=shard_id,
                                         num_shards=num_shards,
                                         random_shuffle=is_training,
                                         pad_last_batch=True,
                                         name="Reader")
    elif is_training:
        images, labels = fn.readers.file(file_root=data_dir, shard_id=shard_id, num_shards=num_shards,
                                         random_shuffle=True, pad_last_batch=True, name="Reader")
    else:
        images, labels = fn.readers.file(file_root=data_dir, shard_id=shard_id, num_shards=num_shards,
                                         stick_to_shard=True, pad_last_batch=True, name="Reader")
    decoder_device = 'cpu' if dali_cpu else 'mixed'
    if is_training:
        images = fn.decoders.image_random_crop(images, device=decoder_device, output_type=types.RGB,
                                               random_area=[0.08, 1.0], num_attempts=100)
        images = fn.resize(images, resize_x=crop, resize_y=crop)
        mirror = fn.random.coin_flip(probability=0.5)
    else:
        images = fn.decoders.image(images, device=decoder_device, output_type=types.RGB)
        images = fn.resize(images, size=size, mode="not_smaller")
        mirror = False
    images = fn.crop_mirror_normalize(images.gpu(), dtype=types.FLOAT, output_layout="CHW",
                                      crop=(crop, crop), mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                      std=[0.229 * 255, 0.224 * 255, 0.225 * 255], mirror=mirror)
    labels = labels.gpu()
    return images, labels


def train_loader(args):
    pipe = create_dali_pipeline(batch_size=args.batch_size, num_threads=args.workers, device_id=args.gpu,
                                seed=12 + args.gpu, data_dir=args.train_dir, crop=224, size=256,
                                dali_cpu=args.dali_cpu, shard_id=args.gpu, num_shards=args.world_size)
    pipe.build()
    return DALIClassificationIterator(pipe, reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL)


def val_loader(args):
    pipe = create_dali_pipeline(batch_size=args.batch_size, num_threads=args.workers, device_id=args.gpu,
                                seed=12 + args.gpu, data_dir=args.val_dir, file_list=args.val_list,
                                crop=224, size=256, dali_cpu=args.dali_cpu, shard_id=args.gpu,
                                num_shards=args.world_size, is_training=False)
    pipe.build()
    return DALIClassificationIterator(pipe, reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("train_dir")
    parser.add_argument("val_dir")
    parser.add_argument("--val-list", default=None)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--gpu", type=int, default=0)
    parser.add_argument("--world-size", type=int, default=1)
    parser.add_argument("--dali-cpu", action="store_true")
    args = parser.parse_args()
    for data in train_loader(args):
        print(data[0]["data"].shape)
    for data in val_loader(args):
        print(data[0]["label"].shape)
