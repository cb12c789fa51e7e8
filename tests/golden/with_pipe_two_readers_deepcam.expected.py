"""Climate segmentation data as DeepCAM's loader reads it: each sample's data and label are .npy
files, read by two numpy readers of the same settings in a pipeline built by hand in a method of
the loader, handed to DALI's PyTorch iterator, which counts its epochs by the data reader.
(tests/test_several_readers.py runs this loader in both modes and compares its epochs.)"""
import glob
import os

import numpy as np
import secrets
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd
import torch


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


class CamDaliNumpyDataloader(object):

    def get_pipeline(self, data_files, label_files, num_shards, shard_id):
        # the self.<name> values the graph reads are taken here, once, as the pipeline read them
        def pipeline_batches(self_root_dir=self.root_dir, self_stick_to_shard=self.stick_to_shard, self_shuffle=self.shuffle, self_use_mmap=self.use_mmap, self_seed=self.seed, self_data_mean=self.data_mean, self_data_stddev=self.data_stddev, *, batch_size=self.batchsize, num_threads=self.num_threads, device_id=self.device.index, seed=self.seed):
            ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
            seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
            reader = ndd.readers.Numpy(device="cpu",
                                    file_root=self_root_dir,
                                    files=data_files,
                                    num_shards=num_shards,
                                    shard_id=shard_id,
                                    stick_to_shard=self_stick_to_shard,
                                    shuffle_after_epoch=self_shuffle,
                                    prefetch_queue_depth=2,
                                    pad_last_batch=True,
                                    dont_use_mmap=not self_use_mmap,
                                    seed=self_seed if self_seed is not None else seed_or_random)

            reader_2 = ndd.readers.Numpy(device="cpu",
                                     file_root=self_root_dir,
                                     files=label_files,
                                     num_shards=num_shards,
                                     shard_id=shard_id,
                                     stick_to_shard=self_stick_to_shard,
                                     shuffle_after_epoch=self_shuffle,
                                     prefetch_queue_depth=2,
                                     pad_last_batch=True,
                                     dont_use_mmap=not self_use_mmap,
                                     seed=self_seed if self_seed is not None else seed_or_random ^ 1)

            # one batch of each reader per iteration, each going on into its next epoch on its own, as in a pipeline
            def endless(reader):
                while True:
                    yield from reader.next_epoch(batch_size=batch_size)

            for (data,), (label,) in zip(endless(reader), endless(reader_2)):
                with ctx:
                    data = data.gpu()
                    label = label.gpu()

                    # normalize data
                    data = ndd.normalize(data,
                                        device="gpu",
                                        mean=self_data_mean,
                                        stddev=self_data_stddev,
                                        scale=1.)

                    # cast label to long
                    label = ndd.cast(label,
                                    device="gpu",
                                    dtype=types.DALIDataType.INT64)

                    # channels first
                    data = ndd.transpose(data,
                                        device="gpu",
                                        perm=[2, 0, 1])
                    outputs = data, label
                yield outputs

        pipeline = pipeline_batches()

        return pipeline

    def __init__(self, root_dir, prefix_data, prefix_label, batchsize,
                 num_threads=1, device=torch.device("cpu"),
                 num_shards=1, shard_id=0, shuffle=False, is_validation=False,
                 use_mmap=True, seed=333):
        self.root_dir = root_dir
        self.batchsize = batchsize
        self.num_threads = num_threads
        self.device = device
        self.use_mmap = use_mmap
        self.shuffle = shuffle
        self.stick_to_shard = not shuffle
        self.is_validation = is_validation
        self.seed = seed

        # per-channel statistics, reshaped to broadcast over channels-last samples
        data_min = np.array([-3.0, -2.9, -2.8])
        data_max = np.array([9.0, 9.1, 9.2])
        self.data_mean = np.reshape(data_min, (1, 1, data_min.shape[0])).astype(np.float32)
        self.data_stddev = np.reshape(data_max - data_min, (1, 1, data_min.shape[0])).astype(np.float32)

        # the readers take the file names relative to the data folder
        self.data_files = sorted(glob.glob(os.path.join(root_dir, prefix_data)))
        self.label_files = sorted(glob.glob(os.path.join(root_dir, prefix_label)))
        data_files = [os.path.relpath(x, root_dir) for x in self.data_files]
        label_files = [os.path.relpath(x, root_dir) for x in self.label_files]

        pipeline = self.get_pipeline(data_files, label_files, num_shards, shard_id)
        self.global_size = len(self.data_files)

        self.iterator = DaliTorchIterator(pipeline, ['data', 'label'], batch_size=self.batchsize, reader_meta=ndd.readers.Numpy(device="cpu", file_root=self.root_dir, files=data_files, num_shards=num_shards, shard_id=shard_id, stick_to_shard=self.stick_to_shard, shuffle_after_epoch=self.shuffle, pad_last_batch=True).get_metadata(), auto_reset=True, last_batch_policy="DROP", prepare_first_batch=False)

        self.epoch_size = {
            "data": ndd.readers.Numpy(device="cpu", file_root=self.root_dir, files=data_files, num_shards=num_shards, shard_id=shard_id, stick_to_shard=self.stick_to_shard, shuffle_after_epoch=self.shuffle, pad_last_batch=True).get_metadata()["epoch_size_padded"],
            "label": ndd.readers.Numpy(device="cpu", file_root=self.root_dir, files=label_files, num_shards=num_shards, shard_id=shard_id, stick_to_shard=self.stick_to_shard, shuffle_after_epoch=self.shuffle, pad_last_batch=True).get_metadata()["epoch_size_padded"],
        }

    def __iter__(self):
        for token in self.iterator:
            data = token[0]['data']
            label = token[0]['label']

            yield data, label, ""
