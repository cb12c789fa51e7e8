# golden-run: pipe=AudioTrainPipeline kwargs={"batch_size": 2, "num_threads": 2, "device_id": None, "shard_id": 1, "num_shards": 2, "file_root": str(DATA / "audio")} iterations=6
"""DALI's RNN-T example (use_cases/pytorch/rnn-t/dali.py): a data layer makes one Pipeline subclass
per GPU and hands the list to a class of its own that makes DALIGenericIterator in its __init__
and turns each batch into what the model takes."""
import numpy as np
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


class DaliTorchMultiIterator:
    """DALIGenericIterator over several converted pipelines, one per GPU (added by dali-migrate).

    Yields a list with one ``{name: torch.Tensor}`` per pipeline, with the epochs
    DALIGenericIterator gives: the last batch FILL (full, wrapping or padded), DROP (left out) or
    PARTIAL (cut to the epoch's samples). ``reader_meta`` holds each pipeline's reader metadata.
    """

    def __init__(self, pipes, output_map, *, batch_size=None, reader_meta=None, size=-1, auto_reset=False,
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
        self._drawn = None
        if batch_size is None:
            # The pipelines came without their batch size: DALI reads it from them and asserts
            # that every batch has it; the first batches, drawn where DALI draws them, tell it.
            self._drawn = [next(pipe) for pipe in self._pipes]
            self.batch_size = batch_size = self._drawn[0][0].batch_size
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
        if self._drawn is not None:
            outputs, self._drawn = self._drawn, None
            return outputs
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


def AudioTrainPipeline(device_id, shard_id, num_shards, file_root, batch_size, sample_rate=16000, nfft=512,
             window_size=0.02, window_stride=0.01, nfeatures=64, num_threads=1, *, seed=42):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=file_root, file_filters=["*.wav"], shard_id=shard_id, num_shards=num_shards)
    while True:
        for audio, label in reader.next_epoch(batch_size=batch_size):
            with ctx:
                audio, sr = ndd.decoders.audio(audio, device="cpu", dtype=types.FLOAT, downmix=True)
                audio = ndd.spectrogram(audio, device="cpu", nfft=nfft, window_length=window_size * sample_rate, window_step=window_stride * sample_rate)
                audio = ndd.mel_filter_bank(audio, device="cpu", sample_rate=sample_rate, nfilter=nfeatures, normalize=True)
                audio = ndd.to_decibels(audio, device="cpu", multiplier=np.log(10), reference=1.0, cutoff_db=-80)
                audio_sh = ndd.as_batch(audio.shape, dtype=ndd.int64, device="cpu")
                audio = ndd.normalize(audio, axes=[1], device="cpu")
                audio = ndd.pad(audio, axes=[1], fill_value=0, device="cpu")
                outputs = audio.gpu(), label.gpu(), audio_sh.gpu()
            yield outputs


class DaliAsrIterator(object):
    """Returns batches for training: audio, audio length, label.

    dali_pipelines: list of DALI pipelines, one per GPU.
    """

    def __init__(self, dali_pipelines, num_samples):
        # When modifying the pipeline, update `output_map` here too
        self.dali_it = DaliTorchMultiIterator(dali_pipelines, ["audio", "label", "audio_shape"], size=num_samples)

    def __next__(self):
        data = self.dali_it.__next__()
        return data[0]["audio"], data[0]["audio_shape"][:, 1], data[0]["label"]

    def next(self):
        return self.__next__()

    def __iter__(self):
        return self


class DaliDataLayer:
    def __init__(self, dataset_path, batch_size, ngpus, nfeatures=64):
        self._dali_data_iterator = self._init_iterator(
            dataset_path=dataset_path, batch_size=batch_size, ngpus=ngpus, nfeatures=nfeatures)

    @classmethod
    def _init_iterator(cls, **kwargs):
        cls.dataset_size = 5
        dali_pipelines = [
            AudioTrainPipeline(
                device_id=idx,
                shard_id=idx,
                num_shards=kwargs["ngpus"],
                file_root=kwargs["dataset_path"],
                batch_size=kwargs["batch_size"],
                nfeatures=kwargs["nfeatures"])
            for idx in range(kwargs["ngpus"])
        ]
        return DaliAsrIterator(dali_pipelines, cls.dataset_size)

    def __len__(self):
        return self.dataset_size

    @property
    def data_iterator(self):
        return self._dali_data_iterator
