# golden-run: pipe=image_pipeline args=(str(DATA / "images"),) kwargs={"batch_size": 4, "crop": 64} iterations=8
"""Training script whose loaders get their pipelines made inline, in the iterator's arguments."""
import argparse

import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import pipeline_def
from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy


@pipeline_def(num_threads=2, device_id=0)
def image_pipeline(data_dir, crop=224):
    jpegs, labels = fn.readers.file(file_root=data_dir, random_shuffle=False, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, resize_x=crop, resize_y=crop)
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                      mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                      std=[0.229 * 255, 0.224 * 255, 0.225 * 255])
    return images, labels


def make_pipe(data_dir, batch_size, crop):
    pipe = image_pipeline(data_dir, crop=crop, batch_size=batch_size)
    pipe.build()
    return pipe


def build_loaders(args):
    train_loader = DALIGenericIterator([image_pipeline(args.train_dir, crop=args.crop, batch_size=args.batch_size)],
                                       ["data", "label"], reader_name="Reader")
    val_loader = DALIGenericIterator(make_pipe(args.val_dir, args.batch_size, args.crop), ["data", "label"],
                                     reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL)
    return train_loader, val_loader


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("train_dir")
    parser.add_argument("val_dir")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--crop", type=int, default=224)
    args = parser.parse_args()
    train_loader, val_loader = build_loaders(args)
    for epoch in range(2):
        for data in train_loader:
            images, target = data[0]["data"], data[0]["label"].squeeze(-1).long()
        for data in val_loader:
            images, target = data[0]["data"], data[0]["label"]


if __name__ == "__main__":
    main()
