# golden-verify: pipe=HybridTrainPipe kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "data_dir": str(DATA / "images"), "interpolation": "bilinear", "crop": 32, "dali_cpu": True} iterations=7
# golden-run: pipe=HybridValPipe kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "data_dir": str(DATA / "images"), "interpolation": "triangular", "crop": 24, "size": 32} iterations=7
"""The ImageNet loaders of NVIDIA's ConvNets training scripts: each pipeline shards its reader by
the rank and world size it asks torch.distributed for, and the loader factory asks again, with the
same statements, to split the epoch among the processes."""
import os

import torch
import secrets
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


class DaliTorchIterator:
    """DALIGenericIterator over one converted pipeline (added by dali-migrate).

    Yields ``[{name: torch.Tensor}]`` per batch, with the epochs DALIGenericIterator gives: the last
    batch FILL (full, wrapping or padded), DROP (left out) or PARTIAL (cut to the epoch's samples).
    """

    def __init__(self, pipe, output_map, *, batch_size, reader_meta=None, size=-1, auto_reset=False,
                 last_batch_padded=False, last_batch_policy="FILL", prepare_first_batch=True):
        assert len(set(output_map)) == len(output_map), "output_map names should be distinct"
        self._pipe, self.output_map, self.batch_size = pipe, list(output_map), batch_size
        self._num_gpus = 1
        self._size, self._policy, self._padded = int(size), last_batch_policy, last_batch_padded
        if auto_reset is False or auto_reset is None or auto_reset == "no":
            self._auto_reset = False
        elif auto_reset is True or auto_reset == "yes":
            self._auto_reset = True
        else:
            raise ValueError(f"Unsupported value for `auto_reset` {auto_reset}")
        assert self._size != 0, "Size cannot be 0"
        assert not reader_meta or self._size < 0, "When reader_name is provided, size should not be set"
        assert not reader_meta or not last_batch_padded, "When reader_name is provided, last_batch_padded should not be set"
        if self._size < 0 and not reader_meta:
            self._policy, self._padded = "FILL", False
        self._reader = reader_meta is not None
        self._counter = 0
        if self._reader:
            n, shards = reader_meta["epoch_size"], reader_meta["number_of_shards"]
            self._shards = shards
            self._padded = reader_meta["pad_last_batch"]
            self._stick = reader_meta["stick_to_shard"]
            self._shard_id = reader_meta["shard_id"]
            if self._policy == "DROP":
                self._size = n // shards
            elif self._padded:
                self._size = reader_meta["epoch_size_padded"] // shards
            else:
                per_shard = -(-n // shards)
                self._size = -(-per_shard // batch_size) * batch_size
            self._counter_per_shard = [0] * shards
            self._shard_sizes = [(i + 1) * n // shards - i * n // shards for i in range(shards)]
            self._shard_sizes_initial = list(self._shard_sizes)
        self._ever_consumed = False
        self._first_batch = None
        if prepare_first_batch:
            try:
                self._first_batch = DaliTorchIterator.__next__(self)
                self._ever_consumed = False
            except StopIteration:
                raise RuntimeError(
                    "It seems that there is no data in the pipeline. This may happen if `last_batch_policy` "
                    "is set to PARTIAL and the requested batch size is greater than the shard size.") from None

    def _end_iteration(self):
        if self._auto_reset:
            self.reset()
        raise StopIteration

    def _advance(self, dry_run=False):
        """Count the batch just taken; True when it is the incomplete last batch DROP leaves out."""
        counter = self._counter + self.batch_size
        should_end = False
        if self._policy == "DROP":
            if self._reader:
                should_end = any(c + counter > s for c, s in zip(self._counter_per_shard, self._shard_sizes))
            else:
                should_end = counter > self._size
        if not dry_run:
            self._counter = counter
            if should_end:
                self._end_iteration()
        return should_end

    def _take(self):
        if self._size > 0 and self._counter >= self._size:
            self._end_iteration()
        try:
            outputs = next(self._pipe)
        except StopIteration:
            if self._size < 0 and self._auto_reset:
                self.reset()
            raise
        return outputs

    def __next__(self):
        self._ever_consumed = True
        if self._first_batch is not None:
            batch, self._first_batch = self._first_batch, None
            return batch
        outputs = self._take()
        batch = {name: out.torch() for name, out in zip(self.output_map, outputs)}
        self._advance()
        keep = self.batch_size
        if self._reader:
            if self._policy == "PARTIAL":
                keep = self.batch_size - (self._counter - self._shard_sizes_initial[self._shard_id])
        elif self._policy == "PARTIAL" and self._size > 0 and self._counter > self._size:
            keep = (self.batch_size - (self._counter - self._size)) % self.batch_size or self.batch_size
        if keep < self.batch_size:
            batch = {name: t[0:keep] for name, t in batch.items()}
        return [batch]

    def next(self):
        self._ever_consumed = True
        return self.__next__()

    def reset(self):
        if self._policy == "DROP":
            should_end = self._advance(dry_run=True)
            already_ended = self._size > 0 and self._counter >= self._size
            if should_end and not already_ended:
                self._take()
                counter = self._counter
                self._counter = counter + self.batch_size
        if self._counter >= self._size or self._size < 0:
            if self._policy == "FILL" and not self._padded:
                if self._reader:
                    self._counter -= min(self._counter_per_shard)
                    self._counter_per_shard = [c + self._counter - s for c, s in zip(self._counter_per_shard, self._shard_sizes)]
                    self._counter = min(self._counter_per_shard)
                else:
                    self._counter = self._counter % self._size
            else:
                self._counter = 0
            if self._reader:
                if not self._stick:
                    self._shard_id = (self._shard_id + 1) % self._shards
                if self._policy == "FILL" and not self._padded:
                    if not self._stick:
                        self._shard_sizes = self._shard_sizes[-1:] + self._shard_sizes[:-1]
                    left = [s - c for s, c in zip(self._shard_sizes, self._counter_per_shard)]
                    self._size = -(-max(left) // self.batch_size) * self.batch_size
                    if self._size == 0:
                        self._counter_per_shard = [0] * self._shards
                        self._counter = 0
                        self._shard_sizes = self._shard_sizes[-1:] + self._shard_sizes[:-1]
                        self._size = -(-max(self._shard_sizes) // self.batch_size) * self.batch_size
        else:
            import logging  # (here: the class is copied into files whose imports stay as they are)
            logging.warning("DALI iterator does not support resetting while epoch is not finished. "
                            "                             Ignoring...")  # (DALI's words and spaces)

    def __iter__(self):
        if self._counter != 0 and self._ever_consumed:
            self.reset()
        return self

    @property
    def size(self):
        return self._size

    def __len__(self):
        if self._policy != "DROP":
            return -(-self.size // self.batch_size)
        return self.size // self.batch_size


def HybridTrainPipe(batch_size, num_threads, device_id, data_dir, interpolation, crop, dali_cpu=False, *, seed=12):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng_2 = ndd.random.RNG(seed=seed_or_random)
    interpolation = {
        "bicubic": types.INTERP_CUBIC,
        "bilinear": types.INTERP_LINEAR,
        "triangular": types.INTERP_TRIANGULAR,
    }[interpolation]
    if torch.distributed.is_initialized():
        rank = torch.distributed.get_rank()
        world_size = torch.distributed.get_world_size()
    else:
        rank = 0
        world_size = 1

    if dali_cpu:
        dali_device = "cpu"
    else:
        dali_device = "gpu"
    reader = ndd.readers.File(file_root=data_dir, shard_id=rank, num_shards=world_size, random_shuffle=True, pad_last_batch=True, seed=seed_or_random)

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        while True:
            for jpegs_2, labels_2 in reader.next_epoch(batch_size=batch_size):
                with ctx:
                    rng = ndd.random.coin_flip(probability=0.5, batch_size=batch_size, rng=rng_2)
                    # This padding sets the size of the internal nvJPEG buffers to be able to handle all
                    # images from full-sized ImageNet without additional reallocations
                    if dali_cpu:
                        images = ndd.decoders.image(jpegs_2, device="gpu" if dali_device == "mixed" else dali_device, output_type=types.RGB)
                    else:
                        images = ndd.decoders.image(jpegs_2, device="gpu", output_type=types.RGB, device_memory_padding=211025920, host_memory_padding=140544512)
                    images = ndd.random_resized_crop(images, device=dali_device, size=[crop, crop], interp_type=interpolation, random_aspect_ratio=[0.75, 4.0 / 3.0], random_area=[0.08, 1.0], num_attempts=100, antialias=False, batch_size=batch_size, rng=rng_2)
                    output = ndd.crop_mirror_normalize(images.gpu(), mirror=rng, device="gpu", dtype=types.FLOAT, output_layout=types.NCHW, crop=(crop, crop), mean=[0.485 * 255, 0.456 * 255, 0.406 * 255], std=[0.229 * 255, 0.224 * 255, 0.225 * 255])
                    outputs = (output, labels_2)
                yield outputs

    return batches()


def HybridValPipe(batch_size, num_threads, device_id, data_dir, interpolation, crop, size, *, seed=12):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    interpolation = {
        "bicubic": types.INTERP_CUBIC,
        "bilinear": types.INTERP_LINEAR,
        "triangular": types.INTERP_TRIANGULAR,
    }[interpolation]
    if torch.distributed.is_initialized():
        rank = torch.distributed.get_rank()
        world_size = torch.distributed.get_world_size()
    else:
        rank = 0
        world_size = 1
    reader = ndd.readers.File(file_root=data_dir, shard_id=rank, num_shards=world_size, random_shuffle=False, pad_last_batch=True)

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        while True:
            for jpegs_2, labels_2 in reader.next_epoch(batch_size=batch_size):
                with ctx:
                    images = ndd.decoders.image(jpegs_2, device="gpu", output_type=types.RGB)
                    images = ndd.resize(images, device="gpu", resize_shorter=size, interp_type=interpolation, antialias=False)
                    output = ndd.crop_mirror_normalize(images, device="gpu", dtype=types.FLOAT, output_layout=types.NCHW, crop=(crop, crop), mean=[0.485 * 255, 0.456 * 255, 0.406 * 255], std=[0.229 * 255, 0.224 * 255, 0.225 * 255])
                    outputs = (output, labels_2)
                yield outputs

    return batches()


class DALIWrapper(object):
    def gen_wrapper(dalipipeline, memory_format):
        for data in dalipipeline:
            input = data[0]["data"].contiguous(memory_format=memory_format)
            target = torch.reshape(data[0]["label"], [-1]).cuda().long()
            yield input, target
        dalipipeline.reset()

    def __init__(self, dalipipeline, memory_format):
        self.dalipipeline = dalipipeline
        self.memory_format = memory_format

    def __iter__(self):
        return DALIWrapper.gen_wrapper(self.dalipipeline, self.memory_format)


def get_dali_train_loader(dali_cpu=False):
    def gdtl(data_path, image_size, batch_size, interpolation="bilinear", workers=5,
             memory_format=torch.contiguous_format, **kwargs):
        if torch.distributed.is_initialized():
            rank = torch.distributed.get_rank()
            world_size = torch.distributed.get_world_size()
        else:
            rank = 0
            world_size = 1

        traindir = os.path.join(data_path, "train")
        pipe = HybridTrainPipe(batch_size=batch_size, num_threads=workers,
                               device_id=rank % torch.cuda.device_count(), data_dir=traindir,
                               interpolation=interpolation, crop=image_size, dali_cpu=dali_cpu)
        train_loader = DaliTorchIterator(pipe, ["data", "label"], batch_size=batch_size, reader_meta=ndd.readers.File(file_root=traindir, shard_id=rank, num_shards=world_size, pad_last_batch=True).get_metadata(), last_batch_policy="PARTIAL")
        return (
            DALIWrapper(train_loader, memory_format),
            int(ndd.readers.File(file_root=traindir, shard_id=rank, num_shards=world_size, pad_last_batch=True).get_metadata()["epoch_size_padded"] / (world_size * batch_size)),
        )

    return gdtl


def get_dali_val_loader():
    def gdvl(data_path, image_size, batch_size, interpolation="bilinear", crop_padding=32, workers=5,
             memory_format=torch.contiguous_format, **kwargs):
        if torch.distributed.is_initialized():
            rank = torch.distributed.get_rank()
            world_size = torch.distributed.get_world_size()
        else:
            rank = 0
            world_size = 1

        valdir = os.path.join(data_path, "val")
        pipe = HybridValPipe(batch_size=batch_size, num_threads=workers,
                             device_id=rank % torch.cuda.device_count(), data_dir=valdir,
                             interpolation=interpolation, crop=image_size, size=image_size + crop_padding)
        val_loader = DaliTorchIterator(pipe, ["data", "label"], batch_size=batch_size, reader_meta=ndd.readers.File(file_root=valdir, shard_id=rank, num_shards=world_size, pad_last_batch=True).get_metadata(), last_batch_policy="PARTIAL")
        return (
            DALIWrapper(val_loader, memory_format),
            int(ndd.readers.File(file_root=valdir, shard_id=rank, num_shards=world_size, pad_last_batch=True).get_metadata()["epoch_size_padded"] / (world_size * batch_size)),
        )

    return gdvl
