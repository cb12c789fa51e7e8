# golden-run: pipe=eval_pipeline args=(str(DATA / "images"), 64, 48) kwargs={"batch_size": 4} iterations=8
"""Extract the features of a frozen backbone over the train and val splits (for a linear probe).

Both splits are read in order, center-cropped, with their own batch size."""
import argparse
import os

import torch
from nvidia.dali import fn, pipeline_def, types
from nvidia.dali.plugin.pytorch import DALIClassificationIterator, LastBatchPolicy


@pipeline_def
def eval_pipeline(data_dir, size, crop, shard_id=0, num_shards=1):
    jpegs, labels = fn.readers.file(file_root=data_dir,
                                    shard_id=shard_id,
                                    num_shards=num_shards,
                                    pad_last_batch=True,
                                    name="Reader")
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, resize_shorter=size, interp_type=types.INTERP_TRIANGULAR)
    images = fn.crop_mirror_normalize(images,
                                      dtype=types.FLOAT,
                                      output_layout="CHW",
                                      crop=(crop, crop),
                                      mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                      std=[0.229 * 255, 0.224 * 255, 0.225 * 255])
    return images, labels.gpu()


def batch_size_for(args, split):
    # val batches are larger (no gradients)
    return args.batch_size if split == "train" else args.val_batch_size


def get_loader(args, split):
    # one pipeline per split
    pipe = eval_pipeline(batch_size=batch_size_for(args, split),
                         num_threads=args.workers,
                         device_id=args.local_rank,
                         data_dir=os.path.join(args.data, split),
                         size=args.size,
                         crop=args.crop,
                         shard_id=args.local_rank,
                         num_shards=args.world_size)
    pipe.build()
    return DALIClassificationIterator(pipe, reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL)


@torch.no_grad()
def extract(model, loader):
    features, targets = [], []
    for data in loader:
        images, labels = data[0]["data"], data[0]["label"].squeeze(-1).long()
        features.append(model(images).flatten(1).cpu())
        targets.append(labels.cpu())
    return torch.cat(features), torch.cat(targets)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("data", help="folder with train/ and val/")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--val-batch-size", type=int, default=512)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--crop", type=int, default=224)
    parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
    parser.add_argument("--world-size", type=int, default=int(os.environ.get("WORLD_SIZE", 1)))
    parser.add_argument("--out", default="features.pt")
    args = parser.parse_args()

    model = torch.hub.load("facebookresearch/dino:main", "dino_resnet50")
    model = model.cuda(args.local_rank).eval()
    saved = {}
    for split in ("train", "val"):
        saved[split] = extract(model, get_loader(args, split))
    torch.save(saved, args.out)


if __name__ == "__main__":
    main()
