# Laid out as DALI's SSD example (docs/examples/use_cases/pytorch/single_stage_detector/src):
# the settings come from the parsed command line, the reader's shard from torch.distributed,
# asked inside try/except (here catching the ValueError recent torch raises too, so that the
# example runs outside a process group).
import torch
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


def COCOPipeline(args, seed):
    batch_size = args.batch_size
    num_threads = args.num_workers
    device_id = args.local_rank
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)

    try:
        shard_id = torch.distributed.get_rank()
        num_shards = torch.distributed.get_world_size()
    except (RuntimeError, ValueError):
        shard_id = 0
        num_shards = 1
    reader = ndd.readers.File(file_root=args.train_root, shard_id=shard_id, num_shards=num_shards, pad_last_batch=True)

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        while True:
            for inputs, labels in reader.next_epoch(batch_size=batch_size):
                with ctx:
                    images = ndd.decoders.image(inputs, device="gpu", output_type=types.RGB)
                    images = ndd.resize(images, device="gpu", resize_x=32, resize_y=32)
                    images = ndd.flip(images, device="gpu", horizontal=1)
                    outputs = images, labels.gpu()
                yield outputs

    return batches()
