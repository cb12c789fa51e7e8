"""The classes dali-migrate writes into a converted file in place of a PyTorch ``DALIGenericIterator``
(or ``DALIClassificationIterator``): ``DaliTorchIterator`` over one converted pipeline,
``DaliTorchMultiIterator`` over several (a list of them, one per GPU).

Each class, from its ``class`` line to the next class (or the end of this file), is copied into
the converted file as it is (the class name may be changed to avoid a clash). The first is the single-pipeline case of
``nvidia.dali.plugin.base_iterator._DaliBaseIterator`` and ``plugin.pytorch.DALIGenericIterator``
(DALI 2.4), with the same counters, so that it takes the same batches from the converted
generator that the original took from ``pipe.run()`` and returns the same epochs: FILL / DROP /
PARTIAL, padded readers, ``auto_reset``, ``reset()``, ``len()``, ``prepare_first_batch``, sharded
readers moving to the next shard each epoch. Checkpointing is not kept (the converted pipeline
has none). ``reader_meta`` is the reader's ``get_metadata()`` (``reader_name=`` in the original).
As in DALI, ``__init__`` takes the first batch through the class's own ``__next__`` and ``next()``
goes through the instance's: a class of the converted file derived from it (a subclass of the
original iterator, ``iterator_subclasses.py``) sees the same calls of its overrides.

``DaliTorchMultiIterator`` is the same logic kept per pipeline as DALI keeps it: one shard id per
pipeline, the counters per shard; without a reader, the counter counts all pipelines' samples and
PARTIAL returns only the pipelines needed to reach ``size``. It is a class of its own so that the
single-pipeline class, which many converted files hold, stays as it was.

The JAX iterator's class is the first one with a few text edits (``rules/jax_iterator.py``: the
docstring, the ``out.torch()`` line, the PARTIAL cut and ``return [batch]``), and the Paddle
iterators' are both classes with edits of their own (``rules/paddle_iterator.py``: the conversion
of an output, the PARTIAL cut); an edit whose text no longer appears here exactly once fails the
conversion (and the tests), so change those lines together (``SOURCE_EDITS`` too).

``PrefetchedPipeline`` (the last class) is DALI's pipeline state for a converted pipeline with
external sources: a framework iterator over one becomes the single-pipeline class with
``rules/torch_iterator.SOURCE_EDITS`` (``DaliTorchSourceIterator``), which drives it where
DALI's iterator drives the pipeline (see that class).
"""

# fmt: off


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
