from nvidia.dali import fn, pipeline_def, types
from nvidia.dali.plugin.pytorch import DALIClassificationIterator, LastBatchPolicy


@pipeline_def
def val_pipe(root, shard_id, num_shards):
    jpegs, labels = fn.readers.file(
        file_root=root, shard_id=shard_id, num_shards=num_shards, pad_last_batch=True, name="Reader"
    )
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, resize_shorter=256)
    images = fn.crop_mirror_normalize(images, crop=(224, 224), dtype=types.FLOAT, output_layout="CHW")
    return images, labels


def validate(model, root, rank, world_size, batch_size=64):
    pipe = val_pipe(root, rank, world_size, batch_size=batch_size, num_threads=4, device_id=rank)
    pipe.build()
    loader = DALIClassificationIterator(pipe, reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL, auto_reset=True)
    correct = 0
    for step, data in enumerate(loader):
        images, labels = data[0]["data"], data[0]["label"].squeeze(-1).long()
        correct += (model(images).argmax(1) == labels).sum().item()
    return correct / len(loader)
