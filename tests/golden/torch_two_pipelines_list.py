# golden-run: pipe=val_pipe args=(str(DATA / "images"), 0, 2) kwargs={"batch_size": 4} iterations=6
from nvidia.dali import fn, pipeline_def
from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy


@pipeline_def(batch_size=16, num_threads=2)
def val_pipe(root, shard_id, num_shards):
    jpegs, labels = fn.readers.file(file_root=root, shard_id=shard_id, num_shards=num_shards, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed")
    images = fn.resize(images, resize_shorter=256)
    images = fn.crop(images, crop=(224, 224))
    return images, labels.gpu()


def evaluate(model, root):
    pipe0 = val_pipe(root, 0, 2, device_id=0)
    pipe1 = val_pipe(root, 1, 2, device_id=1)
    pipe0.build()
    pipe1.build()
    loader = DALIGenericIterator(
        [pipe0, pipe1], ["images", "labels"], reader_name="Reader", last_batch_policy=LastBatchPolicy.DROP, auto_reset=True
    )
    correct = total = 0
    for batches in loader:
        for batch in batches:
            pred = model(batch["images"].permute(0, 3, 1, 2).float()).argmax(1)
            correct += (pred.cpu() == batch["labels"].squeeze(-1).cpu()).sum().item()
            total += batch["labels"].shape[0]
    return correct / total
