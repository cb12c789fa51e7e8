# golden-run: pipe=mnist_sharded_pipeline args=(str(DATA / "caffe2_lmdb"), False, 2, 1) kwargs={"batch_size": 3} iterations=6
"""One DALI pipeline per JAX device, as DALI's multi-GPU JAX and Flax notebooks make them: a loop
fills a list (each pipeline's device read back and printed), one iterator over the list gives
arrays with a leading device axis for jax.pmap; validation runs on one device."""
import os

import jax
import secrets
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


class DaliJaxIterator:
    """JAX DALIGenericIterator over one converted pipeline (added by dali-migrate).

    Yields ``{name: jax.Array}`` per batch, with the epochs DALIGenericIterator gives: the last batch
    FILL (full, wrapping or padded) or DROP (left out).
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
                self._first_batch = DaliJaxIterator.__next__(self)
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
        import jax.dlpack  # here: the converted file need not import jax itself
        batch = {name: jax.dlpack.from_dlpack(ndd.as_tensor(out)) for name, out in zip(self.output_map, outputs)}
        self._advance()
        return batch

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


class DaliJaxMultiIterator:
    """JAX DALIGenericIterator over several converted pipelines, one per device (added by dali-migrate).

    Yields ``{name: jax.Array}`` per step, each array the pipelines' batches joined as DALI's iterator
    joins them (on distinct devices: one array with a leading device axis, sharded over them; on one
    device: stacked), with the epochs DALIGenericIterator gives: the last batch FILL (full, wrapping
    or padded) or DROP (left out). ``reader_meta`` holds each pipeline's reader metadata.
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
                self._first_batch = DaliJaxMultiIterator.__next__(self)
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
        import jax.dlpack  # here: the converted file need not import jax itself
        batch = {}
        for i, name in enumerate(self.output_map):
            batch[name] = self._join([jax.dlpack.from_dlpack(ndd.as_tensor(outs[i])) for outs in outputs])
        self._advance()
        return batch

    @staticmethod
    def _join(arrays):
        # As DALI's JAX iterator (sharding=None) joins one output of every pipeline: one pipeline's
        # array as it is; arrays on distinct devices as one array with a leading device axis,
        # sharded over those devices; arrays all on one device stacked.
        import jax
        import jax.numpy as jnp
        import numpy
        if len(arrays) == 1:
            return arrays[0]
        assert all(a.shape == arrays[0].shape for a in arrays), "Shards shapes have to be the same."
        devices = [next(iter(a.devices())) for a in arrays]
        if len(set(devices)) != len(devices):
            assert len(set(devices)) == 1, "JAX iterator requires shards to be placed on different devices or all on the same device."
            return jnp.stack(arrays)
        mesh = jax.sharding.Mesh(numpy.array(devices), axis_names=("device",))
        sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("device"))
        shape = (len(arrays), *arrays[0].shape)
        return jax.make_array_from_single_device_arrays(shape, sharding, [jnp.expand_dims(a, 0) for a in arrays])

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


training_data_path = os.path.join(os.environ["DALI_EXTRA_PATH"], "db/MNIST/training/")
validation_data_path = os.path.join(os.environ["DALI_EXTRA_PATH"], "db/MNIST/testing/")

BATCH_SIZE_PER_GPU = 100
IMAGE_SIZE = 28


def mnist_sharded_pipeline(data_path, random_shuffle, num_shards, shard_id, *, batch_size=BATCH_SIZE_PER_GPU, num_threads=4, device_id=None, seed=0):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    reader = ndd.readers.Caffe2(
        path=data_path,
        random_shuffle=random_shuffle,
        num_shards=num_shards,
        shard_id=shard_id, seed=seed_or_random)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="gpu", output_type=types.GRAY)
                images = ndd.resize(images, resize_x=IMAGE_SIZE, resize_y=IMAGE_SIZE)
                images = ndd.crop_mirror_normalize(images, dtype=types.FLOAT, std=[255.0], output_layout="CHW")
                images = ndd.reshape(images, shape=[-1])  # Flatten the output image
                labels = labels.gpu()
                if random_shuffle:
                    labels = ndd.one_hot(labels, num_classes=10)
                outputs = images, labels
            yield outputs


pipelines = []
for id, device in enumerate(jax.devices()):
    pipeline = mnist_sharded_pipeline(
        data_path=training_data_path, random_shuffle=True, num_shards=jax.device_count(), shard_id=id, device_id=id)
    print(f"Pipeline {pipeline} working on device {id}")
    pipelines.append(pipeline)

training_iterator = DaliJaxMultiIterator(
    pipelines,
    ["images", "labels"],
    batch_size=BATCH_SIZE_PER_GPU,
    reader_meta=[ndd.readers.Caffe2(path=training_data_path, num_shards=jax.device_count(), shard_id=id).get_metadata() for id, device in enumerate(jax.devices())],
    auto_reset=True)
print(f"Number of batches in training iterator = {len(training_iterator)}")

validation_pipeline = mnist_sharded_pipeline(
    data_path=validation_data_path, random_shuffle=False, num_shards=1, shard_id=0, device_id=0)
validation_iterator = DaliJaxIterator(
    validation_pipeline,
    ["images", "labels"],
    batch_size=BATCH_SIZE_PER_GPU,
    reader_meta=ndd.readers.Caffe2(path=validation_data_path, num_shards=1, shard_id=0).get_metadata(),
    auto_reset=True)


@jax.pmap
def mean_image(images):
    return images.mean(axis=0)


for epoch in range(10):
    for it, batch in enumerate(training_iterator):
        means = mean_image(batch["images"])
    for batch in validation_iterator:
        print(batch["labels"].shape)
