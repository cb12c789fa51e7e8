# golden-verify: pipe=create_dali_pipeline args=(str(DATA / "images"), 32, 40) kwargs={"is_training": True, "batch_size": 4} iterations=4
"""The shape of DALI's ResNet-50 example: one pipeline function, one variable `pipe` that holds
the training pipeline and then the validation one, each handed to its own iterator."""
import argparse

from nvidia.dali.pipeline import pipeline_def
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali.plugin.pytorch import DALIClassificationIterator, LastBatchPolicy


@pipeline_def
def create_dali_pipeline(data_dir, crop, size, is_training=True):
    images, labels = fn.readers.file(file_root=data_dir, random_shuffle=is_training,
                                     pad_last_batch=True, name="Reader")
    if is_training:
        images = fn.decoders.image_random_crop(images, output_type=types.RGB)
        images = fn.resize(images, resize_x=crop, resize_y=crop)
        mirror = fn.random.coin_flip(probability=0.5)
    else:
        images = fn.decoders.image(images, output_type=types.RGB)
        images = fn.resize(images, size=size, mode="not_smaller")
        mirror = False
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                      crop=(crop, crop), mirror=mirror)
    return images, labels


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("data")
    parser.add_argument("--batch-size", type=int, default=4)
    args = parser.parse_args()
    traindir = args.data + "/train"
    valdir = args.data + "/val"

    pipe = create_dali_pipeline(batch_size=args.batch_size, num_threads=2, device_id=None, seed=12,
                                data_dir=traindir, crop=32, size=40, is_training=True)
    pipe.build()
    train_loader = DALIClassificationIterator(pipe, reader_name="Reader",
                                              last_batch_policy=LastBatchPolicy.PARTIAL)

    pipe = create_dali_pipeline(batch_size=args.batch_size, num_threads=2, device_id=None, seed=12,
                                data_dir=valdir, crop=32, size=40, is_training=False)
    pipe.build()
    val_loader = DALIClassificationIterator(pipe, reader_name="Reader",
                                            last_batch_policy=LastBatchPolicy.PARTIAL)

    for epoch in range(2):
        for data in train_loader:
            images, labels = data[0]["data"], data[0]["label"]
        for data in val_loader:
            images, labels = data[0]["data"], data[0]["label"]


if __name__ == "__main__":
    main()
