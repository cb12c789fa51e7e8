"""A loader class that keeps its pipeline in `self.pipe`, made with `with self.pipe:` in __init__
and ended with `self.pipe.set_outputs(...)`, as MLPerf's SSD and NeMo's audio loaders write it;
DALI's PyTorch iterator runs it and the class hands out (images, targets) pairs."""
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


class DaliDataIterator:
    def __init__(self, data_path, batch_size, num_threads, shard_id=0, num_shards=1,
                 is_training=True, image_size=(48, 32), device_id=0):
        self.batch_size = batch_size
        self.image_size = image_size

        # the self.<name> values the graph reads are taken here, once, as the pipeline read them
        def pipe_batches(self_image_size=self.image_size, *, batch_size=self.batch_size, num_threads=num_threads, device_id=device_id, seed=42):
            ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
            reader = ndd.readers.File(
                file_root=data_path,
                shard_id=shard_id,
                num_shards=num_shards,
                stick_to_shard=not is_training,
                pad_last_batch=not is_training)
            # evaluated once, as when the pipeline was built
            resize_x = self_image_size[0]
            resize_y = self_image_size[1]

            # the code above runs when the pipeline is made, as in pipeline mode
            def batches():
                while True:
                    for jpegs, labels in reader.next_epoch(batch_size=batch_size):
                        with ctx:
                            shapes = ndd.peek_image_shape(jpegs)
                            images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                            images = ndd.resize(images, resize_x=resize_x, resize_y=resize_y)
                            images = ndd.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                                              mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                                              std=[0.229 * 255, 0.224 * 255, 0.225 * 255])
                            outputs = images, shapes, labels.gpu()
                        yield outputs

            return batches()

        self.pipe = pipe_batches()

        self.dali_iter = DaliTorchIterator(self.pipe,
                                             ["images", "images_shape", "labels"],
                                             batch_size=self.batch_size,
                                             reader_meta=ndd.readers.File(file_root=data_path, shard_id=shard_id, num_shards=num_shards, stick_to_shard=not is_training, pad_last_batch=not is_training).get_metadata(),
                                             auto_reset=True,
                                             last_batch_policy="PARTIAL")

    def __len__(self):
        return len(self.dali_iter)

    def __iter__(self):
        for obj in self.dali_iter:
            obj = obj[0]
            targets = {"labels": obj["labels"].squeeze(-1), "original_image_size": obj["images_shape"]}
            yield obj["images"], targets
