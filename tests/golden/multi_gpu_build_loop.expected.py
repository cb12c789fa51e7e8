# golden-verify: pipe=caffe_pipeline args=(str(DATA / "caffe_lmdb"), 2) kwargs=dict(batch_size=4) iterations=6
# golden-verify: pipe=caffe_pipeline args=(str(DATA / "caffe_lmdb"), 2) kwargs=dict(batch_size=4, device_id=0) device=gpu iterations=6
"""DALI's multi-GPU LMDB example as projects copy it: the shard is the pipeline's own device, read
with Pipeline.current(), every pipeline is built by a loop, and one iterator takes them all."""
import os.path

import numpy as np
import secrets
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


class DaliTorchMultiIterator:
    """DALIGenericIterator over several converted pipelines, one per GPU (added by dali-migrate).

    Yields a list with one ``{name: torch.Tensor}`` per pipeline, with the epochs
    DALIGenericIterator gives: the last batch FILL (full, wrapping or padded), DROP (left out) or
    PARTIAL (cut to the epoch's samples). ``reader_meta`` holds each pipeline's reader metadata.
    """

    def __init__(self, pipes, output_map, *, batch_size, reader_meta=None, size=-1, auto_reset=False,
                 last_batch_padded=False, last_batch_policy="FILL", prepare_first_batch=True):
        assert len(set(output_map)) == len(output_map), "output_map names should be distinct"

        self._pipes, self.output_map, self.batch_size = list(pipes), list(output_map), batch_size
        self._num_gpus = len(self._pipes)
        self._size, self._policy, self._padded = int(size), last_batch_policy, last_batch_padded
        if auto_reset is False or auto_reset is None or auto_reset == "no":
            self._auto_reset = False
        elif auto_reset is True or auto_reset == "yes":
            self._auto_reset = True
        else:
            raise ValueError(f"Unsupported value for `auto_reset` {auto_reset}")
        assert self._size != 0, "Size cannot be 0"
        assert self._size > 0 or (self._size < 0 and (self._num_gpus == 1 or reader_meta)), \
            "Negative size is supported only for a single pipeline"
        assert not reader_meta or self._size < 0, "When reader_name is provided, size should not be set"
        assert not reader_meta or not last_batch_padded, "When reader_name is provided, last_batch_padded should not be set"
        if self._size < 0 and not reader_meta:
            self._policy, self._padded = "FILL", False
        self._reader = reader_meta is not None
        # With a reader the counter counts one shard's samples, without one all pipelines' together.
        self._step = batch_size if self._reader else self._num_gpus * batch_size
        self._counter = 0
        if self._reader:
            meta = list(reader_meta)

            def same(key, what):
                assert all(m[key] == meta[0][key] for m in meta), f"Reader Operator should have the same {what} in all the pipelines."
                return meta[0][key]

            def all_or_none(key, what):
                assert all(m[key] for m in meta) or not any(m[key] for m in meta), \
                    f"Reader Operator should have the same {what} in all the pipelines."
                return meta[0][key]

            n = same("epoch_size", "size value")
            shards = self._shards = same("number_of_shards", "`num_shards` argument set")
            self._padded = all_or_none("pad_last_batch", "`pad_last_batch` argument set")
            self._stick = all_or_none("stick_to_shard", "`stick_to_shard` argument set")
            # One shard id per pipeline; the counters and sizes below are per shard, as DALI keeps them.
            self._shard_ids = [m["shard_id"] for m in meta]
            if self._policy == "DROP":
                self._size = n // shards
            elif self._padded:
                self._size = meta[0]["epoch_size_padded"] // shards
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
                self._first_batch = DaliTorchMultiIterator.__next__(self)
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
        """Count the batches just taken; True when they are the incomplete last ones DROP leaves out."""
        counter = self._counter + self._step
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
            outputs = [next(pipe) for pipe in self._pipes]
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
        batches = [{name: out.torch() for name, out in zip(self.output_map, outs)} for outs in outputs]
        self._advance()
        if self._reader:
            if self._policy == "PARTIAL":
                left = [self.batch_size - (self._counter - self._shard_sizes_initial[s]) for s in self._shard_ids]
                if any(k < self.batch_size for k in left):
                    batches = [{name: t[0:k] for name, t in b.items()} for b, k in zip(batches, left)]
        elif self._policy == "PARTIAL" and self._counter > self._size and self._size > 0:
            # Exactly `size` samples: the first pipelines' batches whole, the last one's cut.
            diff = self._num_gpus * self.batch_size - (self._counter - self._size)
            batches = batches[0:-(-diff // self.batch_size)]
            keep = diff % self.batch_size or self.batch_size
            batches[-1] = {name: t[0:keep] for name, t in batches[-1].items()}
        return batches

    def next(self):
        self._ever_consumed = True
        return self.__next__()

    def reset(self):
        if self._policy == "DROP":
            should_end = self._advance(dry_run=True)
            already_ended = self._size > 0 and self._counter >= self._size
            if should_end and not already_ended:
                self._take()
                self._counter += self._step
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
                    self._shard_ids = [(s + 1) % self._shards for s in self._shard_ids]
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
            return -(-self.size // self._step)
        return self.size // self._step


lmdb_folder = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "data", "caffe_lmdb")

N = 2  # number of GPUs
BATCH_SIZE = 4  # batch size per GPU


def caffe_pipeline(path, num_gpus, *, batch_size, num_threads=None, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng = ndd.random.RNG(seed=seed_or_random)
    # shard by the GPU this pipeline runs on
    reader = ndd.readers.Caffe(
        path=path, random_shuffle=True, shard_id=device_id, num_shards=num_gpus, seed=seed_or_random)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="gpu")
                images = ndd.resize(images, resize_shorter=ndd.random.uniform(range=(16, 24), batch_size=batch_size, rng=rng), interp_type=types.INTERP_LINEAR)
                images = ndd.crop_mirror_normalize(
                    images,
                    crop_pos_x=ndd.random.uniform(range=(0.0, 1.0), batch_size=batch_size, rng=rng),
                    crop_pos_y=ndd.random.uniform(range=(0.0, 1.0), batch_size=batch_size, rng=rng),
                    dtype=types.FLOAT,
                    crop=(12, 12),
                    mean=[128.0, 128.0, 128.0],
                    std=[1.0, 1.0, 1.0],
                )
                outputs = images, labels
            yield outputs


label_range = (0, 999)
pipes = [caffe_pipeline(lmdb_folder, batch_size=BATCH_SIZE, num_threads=2, device_id=device_id, num_gpus=N) for device_id in range(N)]

dali_iter = DaliTorchMultiIterator(pipes, ["data", "label"], batch_size=BATCH_SIZE, reader_meta=[ndd.readers.Caffe(path=lmdb_folder, shard_id=device_id, num_shards=N).get_metadata() for device_id in range(N)])

for i, data in enumerate(dali_iter):
    for d in data:
        label = d["label"]
        assert np.equal(np.mod(label, 1), 0).all()
        assert (label >= label_range[0]).all() and (label <= label_range[1]).all()
