# golden-run: pipe=FileReadPipeline kwargs={"batch_size": 3, "num_threads": 2, "device_id": None, "num_gpus": 2, "data_dir": str(DATA)} iterations=9
# golden-run: pipe=TFRecordPipeline kwargs={"batch_size": 3, "num_threads": 2, "device_id": None, "num_gpus": 2, "data_dir": str(DATA)} iterations=5
"""DALI's "various readers" notebook for Paddle, cut down to two readers: Pipeline subclasses kept
with their label ranges in a list, each made once per GPU in one loop and read through Paddle's
DALIGenericIterator."""
import os

import numpy as np
import nvidia.dali.tfrecord as tfrec
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


class DaliPaddleMultiIterator:
    """Paddle DALIGenericIterator over several converted pipelines, one per GPU (added by dali-migrate).

    Yields a list with one ``{name: DenseTensor}`` per pipeline (a cut step copied to the CPU), with the epochs
    DALIGenericIterator gives: the last batch FILL (full, wrapping or padded), DROP (left out) or
    PARTIAL (cut to the epoch's samples). ``reader_meta`` holds each pipeline's reader metadata.
    """

    def __init__(self, pipes, output_map, *, batch_size, reader_meta=None, size=-1, auto_reset=False,
                 last_batch_padded=False, last_batch_policy="FILL", prepare_first_batch=True):
        # (name, LoD level) pairs, as DALI's Paddle iterator takes them; dynamic mode has no LoDTensor.
        if any(not isinstance(v, str) and v[1] for v in output_map):
            raise NotImplementedError("output_map with a LoD level above 0: a LoDTensor has no dynamic-mode counterpart")
        output_map = [v if isinstance(v, str) else v[0] for v in output_map]
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
                self._first_batch = DaliPaddleMultiIterator.__next__(self)
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
        batches = [{name: self._paddle(out) for name, out in zip(self.output_map, outs)} for outs in outputs]
        self._advance()
        if self._reader:
            if self._policy == "PARTIAL":
                left = [self.batch_size - (self._counter - self._shard_sizes_initial[s]) for s in self._shard_ids]
                if any(k < self.batch_size for k in left):
                    batches = [{name: self._cut(t, k) for name, t in b.items()} for b, k in zip(batches, left)]
        elif self._policy == "PARTIAL" and self._counter > self._size and self._size > 0:
            # Exactly `size` samples: the first pipelines' batches whole, the last one's cut.
            diff = self._num_gpus * self.batch_size - (self._counter - self._size)
            batches = batches[0:-(-diff // self.batch_size)]
            keep = diff % self.batch_size or self.batch_size
            batches[-1] = {name: self._cut(t, keep) for name, t in batches[-1].items()}
        return batches

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


N = 2  # number of GPUs
BATCH_SIZE = 3  # batch size per GPU


def FileReadPipeline(batch_size, num_threads, device_id, num_gpus, data_dir, *, seed=12):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=os.path.join(data_dir, "images"))

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        while True:
            for images, labels in reader.next_epoch(batch_size=batch_size):
                with ctx:
                    images = ndd.decoders.image(images, device="cpu", output_type=types.RGB)
                    outputs = (ndd.resize(images, device="cpu", resize_x=20, resize_y=20), labels)
                yield outputs

    return batches()


def TFRecordPipeline(batch_size, num_threads, device_id, num_gpus, data_dir, *, seed=12):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.TFRecord(path=os.path.join(data_dir, "tfrecord", "train.tfrecord"), index_path=os.path.join(data_dir, "tfrecord", "train.idx"), features={
            "image/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
            "image/class/label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
        })

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        while True:
            for inputs in reader.next_epoch(batch_size=batch_size):
                with ctx:
                    inputs_2 = inputs["image/encoded"]
                    labels = inputs["image/class/label"]
                    images = ndd.decoders.image(inputs_2, device="cpu", output_type=types.RGB)
                    outputs = (ndd.resize(images, device="cpu", resize_x=20, resize_y=20), labels)
                yield outputs

    return batches()


def check_readers(data_dir, iterations=32):
    pipe_types = [(FileReadPipeline, (0, 2)), (TFRecordPipeline, (0, 2))]
    for pipe_name, label_range in pipe_types:
        print("RUN: " + pipe_name.__name__)
        pipes = [pipe_name(batch_size=BATCH_SIZE, num_threads=2, device_id=i, num_gpus=N, data_dir=data_dir) for i in range(N)]
        dali_iter = DaliPaddleMultiIterator(pipes, ["data", "label"], batch_size=BATCH_SIZE, size=(
            ndd.readers.File(file_root=os.path.join(data_dir, "images")).get_metadata()["epoch_size_padded"] if pipe_name is FileReadPipeline
            else ndd.readers.TFRecord(path=os.path.join(data_dir, "tfrecord", "train.tfrecord"), index_path=os.path.join(data_dir, "tfrecord", "train.idx"), features={
                "image/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
                "image/class/label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
            }).get_metadata()["epoch_size_padded"]
        ))
        for i, data in enumerate(dali_iter):
            if i >= iterations:
                break
            for d in data:
                label = np.array(d["label"])
                image = np.array(d["data"])
                assert np.equal(np.mod(label, 1), 0).all()
                assert ((label >= label_range[0]) & (label <= label_range[1])).all()
                print(i, image.shape, label.flatten().tolist(), int(image.sum()))
        print("OK : " + pipe_name.__name__)
