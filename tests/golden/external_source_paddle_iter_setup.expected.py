"""DALI's Paddle ExternalSource example: a Pipeline subclass fed in iter_setup() from an iterator
made at module level (rewound where it ends), a Paddle DALIClassificationIterator with size= and
the PARTIAL policy."""
import os
from random import shuffle

import numpy as np
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


class PrefetchedPipeline:
    """A converted pipeline with external sources, driven as DALI's iterators drive a pipeline
    (added by dali-migrate).

    The converted generator yields None where the source ended (where ``pipe.run()`` raised
    StopIteration) and, when advanced again, starts the source's next epoch. This class keeps the
    pipeline's queue as DALI 2.4's ``Pipeline`` does (``schedule_run``, ``share_outputs``,
    ``reset``, ``empty``): the first batch taken fills it ``prefetch_queue_depth`` batches deep
    (one batch with ``exec_pipelined=False``), each later ``schedule_run()`` draws one more, and
    nothing is drawn past the source's end until ``reset()``. The iterator that drives it calls
    these where DALI's calls them, so the source runs at the same points and its epochs end where
    the original's did.
    """

    def __init__(self, generator, prefetch_queue_depth=2, exec_pipelined=True):
        import weakref  # (here: the class is copied into files whose imports stay as they are)

        self._generator, self._depth, self._pipelined = generator, prefetch_queue_depth, exec_pipelined
        self._queue = []
        self._first_iter, self._last_iter = True, False
        self._ever_scheduled = False  # the iterator's: its first batch fills the queue first
        # Batches drawn ahead that nobody reads may still be computed by dynamic mode's worker
        # thread when the program ends; DALI 2.4 aborts the process if that thread is stopped
        # inside an operator ("terminate called without an active exception"), where the
        # pipeline exited cleanly. They are finished first, at exit (or when this is collected).
        weakref.finalize(self, type(self)._finish, self._queue)

    @staticmethod
    def _finish(queue):
        for outputs in queue:
            for out in outputs if isinstance(outputs, (tuple, list)) else (outputs,):
                if hasattr(out, "evaluate"):
                    out.evaluate()

    def _draw(self):
        outputs = next(self._generator)
        if outputs is None:
            self._last_iter = True
        else:
            self._queue.append(outputs)
        return outputs is not None

    def schedule_run(self):
        if self._first_iter and self._pipelined:
            for _ in range(self._depth):
                self._first_iter = False
                if not self._draw():
                    break
        elif not self._last_iter:
            self._draw()

    def share_outputs(self):
        if not self._ever_scheduled:
            self._ever_scheduled = True
            self.schedule_run()
        if not self._queue:
            raise StopIteration
        return self._queue.pop(0)

    def reset(self):
        if self._last_iter:
            self._first_iter, self._last_iter = True, False

    def empty(self):
        return not self._queue


class DaliPaddleSourceIterator:
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
                self._first_batch = DaliPaddleSourceIterator.__next__(self)
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
            outputs = self._pipe.share_outputs()
        except StopIteration:
            if self._size < 0 and self._auto_reset:
                self.reset()
            raise
        if self._reader or self._size != -1:
            assert all(out.batch_size == self.batch_size for out in outputs), (
                "Variable batch size is not supported by the iterator when reader_name is provided or "
                "iterator size is set explicitly")
        return outputs

    def __next__(self):
        self._ever_consumed = True
        if self._first_batch is not None:
            batch, self._first_batch = self._first_batch, None
            return batch
        outputs = self._take()
        batch = {name: self._paddle(out) for name, out in zip(self.output_map, outputs)}
        self._pipe.schedule_run()
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
                self._pipe.schedule_run()
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
            self._pipe.reset()
            if self._pipe.empty():
                self._pipe.schedule_run()
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


batch_size = 4
epochs = 3
data_dir = os.environ.get("DATA_DIR", "../../data/")


class ExternalInputIterator(object):
    def __init__(self, batch_size, device_id, num_gpus):
        self.images_dir = data_dir
        self.batch_size = batch_size
        with open(self.images_dir + "images_list.txt", "r") as f:
            self.files = [line.rstrip() for line in f if line != ""]
        self.data_set_len = len(self.files)
        self.files = self.files[self.data_set_len * device_id // num_gpus:
                                self.data_set_len * (device_id + 1) // num_gpus]
        self.n = len(self.files)

    def __iter__(self):
        self.i = 0
        shuffle(self.files)
        return self

    def __next__(self):
        batch = []
        labels = []
        if self.i >= self.n:
            raise StopIteration
        for _ in range(self.batch_size):
            jpeg_filename, label = self.files[self.i].split(" ")
            with open(self.images_dir + jpeg_filename, "rb") as f:
                batch.append(np.frombuffer(f.read(), dtype=np.uint8))
            labels.append(np.array([label], dtype=np.uint8))
            self.i = (self.i + 1) % self.n
        return (batch, labels)

    @property
    def size(self):
        return self.data_set_len

    next = __next__


def ExternalSourcePipeline(batch_size, num_threads, device_id, external_data, *, seed=12):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    iterator = iter(external_data)

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        nonlocal iterator
        while True:
            try:
                try:
                    (images_2, labels_2) = iterator.next()
                except StopIteration:
                    iterator = iter(external_data)
                    raise StopIteration
            except StopIteration:
                yield None  # the source's end: pipe.run() raised StopIteration here; next() starts it again, as after pipe.reset()
                continue
            with ctx:
                jpegs = ndd.batch(images_2)
                labels = ndd.batch(labels_2)
                images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                images = ndd.resize(images, device="gpu", resize_x=240, resize_y=240)
                output = ndd.cast(images, device="gpu", dtype=types.UINT8)
                outputs = (output, labels)
            yield outputs

    return batches()


eii = ExternalInputIterator(batch_size, 0, 1)
pipe = ExternalSourcePipeline(batch_size=batch_size, num_threads=2, device_id=0, external_data=eii)
pii = DaliPaddleSourceIterator(PrefetchedPipeline(pipe), ["data", "label"], batch_size=batch_size, size=eii.size, last_batch_padded=True, last_batch_policy="PARTIAL")

for e in range(epochs):
    for i, data in enumerate(pii):
        print("epoch: {}, iter {}, real batch size: {}".format(e, i, len(np.array(data[0]["data"]))))
    pii.reset()
