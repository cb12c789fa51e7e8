# golden-run: pipe=HybridValPipe args=(str(DATA / "images"), 4) kwargs={"device_id": None, "crop": 48, "resize_shorter": 64, "num_threads": 2, "random_shuffle": False} iterations=8
# golden-verify: pipe=HybridTrainPipe args=(str(DATA / "images"), 4) kwargs={"device_id": None, "crop": 48, "resize_shorter": 64, "num_threads": 2, "seed": 7, "shard_id": 1, "num_shards": 2} iterations=6
"""A Paddle ResNet-50 loader as NVIDIA's DeepLearningExamples write it: a base Pipeline subclass
owns the sharded reader and calls a hook its training and validation subclasses fill in; the
loader picks the subclass through a variable (None first, then one per mode) and gives the
pipeline it makes to Paddle's DALIGenericIterator."""
import os

import paddle
import secrets
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


class DaliPaddleIterator:
    """Paddle DALIGenericIterator over one converted pipeline (added by dali-migrate).

    Yields ``[{name: DenseTensor}]`` per batch (Paddle's core tensor, as DALI's iterator gives), with
    the epochs DALIGenericIterator gives: the last batch FILL (full, wrapping or padded), DROP (left
    out) or PARTIAL (cut to the epoch's samples, copied to the CPU as DALI's iterator does).
    """

    def __init__(self, pipe, output_map, *, batch_size, reader_meta=None, size=-1, auto_reset=False,
                 last_batch_padded=False, last_batch_policy="FILL", prepare_first_batch=True):
        # (name, LoD level) pairs, as DALI's Paddle iterator takes them; dynamic mode has no LoDTensor.
        if any(not isinstance(v, str) and v[1] for v in output_map):
            raise NotImplementedError("output_map with a LoD level above 0: a LoDTensor has no dynamic-mode counterpart")
        output_map = [v if isinstance(v, str) else v[0] for v in output_map]
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
                self._first_batch = DaliPaddleIterator.__next__(self)
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
        batch = {name: self._paddle(out) for name, out in zip(self.output_map, outputs)}
        self._advance()
        keep = self.batch_size
        if self._reader:
            if self._policy == "PARTIAL":
                keep = self.batch_size - (self._counter - self._shard_sizes_initial[self._shard_id])
        elif self._policy == "PARTIAL" and self._size > 0 and self._counter > self._size:
            keep = (self.batch_size - (self._counter - self._size)) % self.batch_size or self.batch_size
        if keep < self.batch_size:
            batch = {name: self._cut(t, keep) for name, t in batch.items()}
        return [batch]

    def next(self):
        self._ever_consumed = True
        return self.__next__()

    @staticmethod
    def _paddle(out):
        # As DALI's iterator makes an output: Paddle's core DenseTensor over the dense batch's memory,
        # through DLPack; a GPU batch's work is ordered before Paddle's current stream.
        import paddle  # here: the converted file need not import paddle itself
        tensor = ndd.as_tensor(out)
        device_type, device_id = tensor.__dlpack_device__()
        if int(device_type) == 2:  # kDLCUDA
            capsule = tensor.__dlpack__(stream=paddle.device.cuda.current_stream(device_id).cuda_stream)
        else:
            capsule = tensor.__dlpack__()
        return paddle.framework.core.from_dlpack(capsule)

    @staticmethod
    def _cut(tensor, keep):
        # As DALI's iterator cuts a batch (lod_tensor_clip): a copy of the first samples, in host memory.
        import numpy
        import paddle
        result = paddle.framework.core.LoDTensor()
        result.set(numpy.array(tensor)[0:keep], paddle.CPUPlace())
        return result

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


TRAIN, EVAL = "train", "eval"


def HybridTrainPipe(file_root,
             batch_size,
             device_id,
             crop,
             resize_shorter=256,
             num_threads=4,
             seed=42,
             shard_id=0,
             num_shards=1,
             random_shuffle=True,
             dont_use_mmap=True):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng_2 = ndd.random.RNG(seed=seed_or_random)
    reader = ndd.readers.File(file_root=file_root, shard_id=shard_id, num_shards=num_shards, random_shuffle=random_shuffle, dont_use_mmap=dont_use_mmap, seed=seed_or_random)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                rng = ndd.random.coin_flip(probability=0.5, batch_size=batch_size, rng=rng_2)
                images = ndd.decoders.image_random_crop(jpegs, device="gpu", output_type=types.DALIImageType.RGB, random_aspect_ratio=[3. / 4., 4. / 3.], random_area=[0.08, 1.0], num_attempts=100, batch_size=batch_size, rng=rng_2)
                images = ndd.resize(images, device="gpu", resize_x=crop, resize_y=crop, interp_type=types.INTERP_LINEAR)
                output = ndd.crop_mirror_normalize(images.gpu(), mirror=rng, device="gpu", dtype=types.FLOAT, output_layout="CHW", crop=(crop, crop), mean=[0.485 * 255, 0.456 * 255, 0.406 * 255], std=[0.229 * 255, 0.224 * 255, 0.225 * 255])
                outputs = (output, ndd.cast(labels.gpu(), dtype=types.DALIDataType.INT64, device="gpu"))
            yield outputs


def HybridValPipe(file_root,
             batch_size,
             device_id,
             crop,
             resize_shorter=256,
             num_threads=4,
             seed=42,
             shard_id=0,
             num_shards=1,
             random_shuffle=True,
             dont_use_mmap=True):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    reader = ndd.readers.File(file_root=file_root, shard_id=shard_id, num_shards=num_shards, random_shuffle=random_shuffle, dont_use_mmap=dont_use_mmap, seed=seed_or_random)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="gpu")
                images = ndd.resize(images, device="gpu", resize_shorter=resize_shorter, interp_type=types.INTERP_LINEAR)
                output = ndd.crop_mirror_normalize(images, device="gpu", dtype=types.FLOAT, output_layout="CHW", crop=(crop, crop), mean=[0.485 * 255, 0.456 * 255, 0.406 * 255], std=[0.229 * 255, 0.224 * 255, 0.225 * 255])
                outputs = (output, ndd.cast(labels.gpu(), dtype=types.DALIDataType.INT64, device="gpu"))
            yield outputs


def dali_dataloader(args, mode, device):
    assert "gpu" in device, "gpu training is required for DALI"
    device_id = int(device.split(':')[1])
    shard_id = paddle.distributed.get_rank()
    num_shards = paddle.distributed.get_world_size()

    file_root = args.image_root
    pipe_class = None

    if mode == TRAIN:
        file_root = os.path.join(file_root, 'train')
        pipe_class = HybridTrainPipe
    else:
        file_root = os.path.join(file_root, 'val')
        pipe_class = HybridValPipe

    pipe = pipe_class(
        file_root,
        args.batch_size,
        device_id,
        args.crop_size,
        resize_shorter=args.resize_short,
        num_threads=args.dali_num_threads,
        seed=args.dali_random_seed + shard_id,
        shard_id=shard_id,
        num_shards=num_shards)
    return DaliPaddleIterator(pipe, ['data', 'label'], batch_size=args.batch_size, reader_meta=ndd.readers.File(file_root=file_root, shard_id=shard_id, num_shards=num_shards).get_metadata())


def build_dataloader(args, mode):
    return dali_dataloader(args, mode, paddle.device.get_device())
