# Laid out as DALI's SSD example (docs/examples/use_cases/pytorch/single_stage_detector/src):
# the settings come from the parsed command line, the reader's shard from torch.distributed,
# asked inside try/except (here catching the ValueError recent torch raises too, so that the
# example runs outside a process group).
import torch
from nvidia.dali.pipeline import Pipeline
import nvidia.dali.ops as ops
import nvidia.dali.types as types


class COCOPipeline(Pipeline):
    def __init__(self, args, seed):
        super(COCOPipeline, self).__init__(
            batch_size=args.batch_size,
            device_id=args.local_rank,
            num_threads=args.num_workers,
            seed=seed)

        try:
            shard_id = torch.distributed.get_rank()
            num_shards = torch.distributed.get_world_size()
        except (RuntimeError, ValueError):
            shard_id = 0
            num_shards = 1

        self.input = ops.readers.File(
            file_root=args.train_root,
            shard_id=shard_id,
            num_shards=num_shards,
            pad_last_batch=True)

        self.decode = ops.decoders.Image(device="mixed", output_type=types.RGB)
        self.resize = ops.Resize(device="gpu", resize_x=32, resize_y=32)
        self.flip = ops.Flip(device="gpu", horizontal=1)

    def define_graph(self):
        inputs, labels = self.input(name="Reader")
        images = self.decode(inputs)
        images = self.resize(images)
        images = self.flip(images)
        return images, labels.gpu()
