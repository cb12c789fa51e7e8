# golden-run: pipe=train_pipe args=(str(DATA / "images"),) kwargs={"batch_size": 4, "shard_id": 1, "num_shards": 2} iterations=8
"""Single-process multi-GPU training as DALI's PyTorch docs show it: one pipeline per GPU, each
reading its shard, all of them given to one iterator that yields one dict per GPU."""
import torch
from nvidia.dali import fn, pipeline_def, types
from nvidia.dali.plugin.pytorch import DALIClassificationIterator, LastBatchPolicy


@pipeline_def(num_threads=4)
def train_pipe(data_dir, shard_id, num_shards):
    jpegs, labels = fn.readers.file(
        file_root=data_dir, shard_id=shard_id, num_shards=num_shards, pad_last_batch=True, name="Reader"
    )
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, resize_x=64, resize_y=64)
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW")
    return images, labels.gpu()


def train(models, data_dir, batch_size=32):
    n_gpus = torch.cuda.device_count()
    pipes = [
        train_pipe(data_dir, device_id=gpu, shard_id=gpu, num_shards=n_gpus, batch_size=batch_size)
        for gpu in range(n_gpus)
    ]
    for pipe_id in range(len(pipes)):
        print(f"pipeline {pipe_id} ready")
    pipes[0].build()
    print("samples per epoch:", pipes[0].epoch_size("Reader"))
    loader = DALIClassificationIterator(pipes, reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL)
    for epoch in range(3):
        for step, data in enumerate(loader):
            for gpu, d in enumerate(data):
                out = models[gpu](d["data"])
                loss = torch.nn.functional.cross_entropy(out, d["label"].squeeze(-1).long())
                loss.backward()
        loader.reset()
