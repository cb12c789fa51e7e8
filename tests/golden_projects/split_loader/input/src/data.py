import os

from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

from src.image_pipeline import ImagePipeline


def get_train_loader(args, local_rank=0):
    train_pipe = ImagePipeline(
        os.path.join(args.data, "images"),
        args.batch_size,
        args.workers,
        local_rank)
    train_pipe.build()

    train_loader = DALIGenericIterator(
        train_pipe,
        ["images", "labels"],
        reader_name="Reader",
        last_batch_policy=LastBatchPolicy.PARTIAL)

    return train_loader, train_pipe.epoch_size("Reader")
