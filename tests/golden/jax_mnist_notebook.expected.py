# golden-run: pipe=mnist_pipeline args=(str(DATA / "caffe2_lmdb"), False) kwargs={"batch_size": 3} iterations=6
"""JAX training over DALI as DALI's JAX notebook writes it (its cells one after another): the
pipelines and an iterator printed, the iterators' size read, the validation iterator handed to a
function that iterates it, JAX imported only in the cell below the one that makes the iterators."""
import os

training_data_path = os.path.join(os.environ["DALI_EXTRA_PATH"], "db/MNIST/training/")
validation_data_path = os.path.join(os.environ["DALI_EXTRA_PATH"], "db/MNIST/testing/")
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


batch_size = 100
image_size = 28
num_classes = 10


def mnist_pipeline(data_path, random_shuffle, *, batch_size=batch_size, num_threads=4, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    reader = ndd.readers.Caffe2(path=data_path, random_shuffle=random_shuffle, seed=seed_or_random)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="gpu", output_type=types.GRAY)
                images = ndd.resize(images, resize_x=image_size, resize_y=image_size)
                images = ndd.crop_mirror_normalize(images, dtype=types.FLOAT, std=[255.0], output_layout="CHW")
                images = ndd.reshape(images, shape=[image_size * image_size])

                labels = labels.gpu()

                if random_shuffle:
                    labels = ndd.one_hot(labels, num_classes=num_classes)

                outputs = images, labels
            yield outputs


print("Creating pipelines")
training_pipeline = mnist_pipeline(data_path=training_data_path, random_shuffle=True)
validation_pipeline = mnist_pipeline(data_path=validation_data_path, random_shuffle=False)
print(training_pipeline)
print(validation_pipeline)

training_iterator = DaliJaxIterator(
    training_pipeline,
    ["images", "labels"],
    batch_size=batch_size,
    reader_meta=ndd.readers.Caffe2(path=training_data_path).get_metadata(),
    auto_reset=True)
validation_iterator = DaliJaxIterator(
    validation_pipeline,
    ["images", "labels"],
    batch_size=batch_size,
    reader_meta=ndd.readers.Caffe2(path=validation_data_path).get_metadata(),
    auto_reset=True)
print(training_iterator)
print(f"Training iterator size = {training_iterator.size}")
print(f"Validation iterator size = {validation_iterator.size}")

import jax
import jax.numpy as jnp


def predict(params, images):
    w, b = params
    return images @ w + b


@jax.jit
def update(params, batch, step_size):
    def loss(p):
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(predict(p, batch["images"])) * batch["labels"], axis=1))

    return [p - step_size * g for p, g in zip(params, jax.grad(loss)(params))]


def accuracy(params, iterator):
    correct = 0
    for batch in iterator:
        correct = correct + jnp.sum(jnp.argmax(predict(params, batch["images"]), axis=1) == batch["labels"].ravel())
    return correct / iterator.size


params = [jnp.zeros((image_size * image_size, num_classes)), jnp.zeros(num_classes)]
for epoch in range(10):
    for batch in training_iterator:
        params = update(params, batch, 0.001)
    test_acc = accuracy(params, validation_iterator)
    print(f"Epoch {epoch}: test set accuracy {test_acc}")
