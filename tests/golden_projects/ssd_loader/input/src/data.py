import os

import torch
from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

from src.coco_pipeline import COCOPipeline


def get_train_dali_loader(args, local_seed):
    train_pipe = COCOPipeline(
        args,
        seed=local_seed)

    train_loader = DALIGenericIterator(
        train_pipe,
        ["images", "labels"],
        reader_name="Reader",
        last_batch_policy=LastBatchPolicy.FILL)

    return train_loader


def get_train_loader(args):
    args.train_root = os.path.join(args.data, "images")
    return get_train_dali_loader(args, args.seed)
