# golden-run: pipe=val_pipe args=(str(DATA / "images"),) kwargs={"batch_size": 4, "shard_id": 0, "num_shards": 1} iterations=8
import argparse
import os
import secrets

from nvidia.dali import types
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


def train_pipe(data_dir, shard_id, num_shards, crop=224, *, batch_size, num_threads=None, device_id=None, seed=12):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng = ndd.random.RNG(seed=seed_or_random)
    reader = ndd.readers.File(
        file_root=data_dir, shard_id=shard_id, num_shards=num_shards, random_shuffle=True, pad_last_batch=True, seed=seed_or_random)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image_random_crop(
                    jpegs, device="gpu", output_type=types.RGB, random_aspect_ratio=[0.8, 1.25], random_area=[0.1, 1.0], num_attempts=100, 
                batch_size=batch_size, rng=rng)
                images = ndd.resize(images, resize_x=crop, resize_y=crop, interp_type=types.INTERP_TRIANGULAR)
                mirror = ndd.random.coin_flip(probability=0.5, batch_size=batch_size, rng=rng)
                images = ndd.crop_mirror_normalize(
                    images,
                    dtype=types.FLOAT,
                    output_layout="CHW",
                    crop=(crop, crop),
                    mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                    std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
                    mirror=mirror,
                )
                labels = ndd.cast(labels.gpu(), dtype=types.INT64)
                outputs = images, labels
            yield outputs


def val_pipe(data_dir, shard_id, num_shards, crop=224, size=256, *, batch_size, num_threads=None, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(
        file_root=data_dir, shard_id=shard_id, num_shards=num_shards, pad_last_batch=True)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
                images = ndd.resize(images, resize_shorter=size, interp_type=types.INTERP_TRIANGULAR)
                images = ndd.crop_mirror_normalize(
                    images,
                    dtype=types.FLOAT,
                    output_layout="CHW",
                    crop=(crop, crop),
                    mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                    std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
                )
                labels = ndd.cast(labels.gpu(), dtype=types.INT64)
                outputs = images, labels
            yield outputs


def main(args):
    # Imported here: the pipelines above are also used by tools that do not install Paddle.
    import paddle

    local_rank = int(os.environ.get("PADDLE_TRAINER_ID", 0))
    world_size = int(os.environ.get("PADDLE_TRAINERS_NUM", 1))
    device_id = int(os.environ.get("FLAGS_selected_gpus", 0))
    paddle.set_device(f"gpu:{device_id}")

    train_dir, val_dir = os.path.join(args.data, "train"), os.path.join(args.data, "val")
    pipe = train_pipe(
        train_dir, local_rank, world_size,
        batch_size=args.batch_size, num_threads=args.num_threads, device_id=device_id,
    )
    train_loader = DaliPaddleIterator(pipe, ["data", "label"], batch_size=args.batch_size, reader_meta=ndd.readers.File(file_root=train_dir, shard_id=local_rank, num_shards=world_size, pad_last_batch=True).get_metadata(), last_batch_policy="DROP")

    val = val_pipe(
        val_dir, local_rank, world_size,
        batch_size=args.batch_size, num_threads=args.num_threads, device_id=device_id,
    )
    val_loader = DaliPaddleIterator(val, ["data", "label"], batch_size=args.batch_size, reader_meta=ndd.readers.File(file_root=val_dir, shard_id=local_rank, num_shards=world_size, pad_last_batch=True).get_metadata(), last_batch_policy="PARTIAL")

    model = paddle.vision.models.resnet50(num_classes=1000)
    optimizer = paddle.optimizer.Momentum(
        learning_rate=args.lr, momentum=0.9, parameters=model.parameters(), weight_decay=1e-4
    )
    for epoch in range(args.epochs):
        model.train()
        for step, batch in enumerate(train_loader):
            images = paddle.to_tensor(batch[0]["data"])
            labels = paddle.to_tensor(batch[0]["label"])
            loss = paddle.nn.functional.cross_entropy(model(images), labels)
            loss.backward()
            optimizer.step()
            optimizer.clear_grad()
            if local_rank == 0 and step % args.print_freq == 0:
                print(f"epoch {epoch} step {step}/{len(train_loader)} loss {float(loss):.4f}")
        train_loader.reset()

        model.eval()
        correct = total = 0
        with paddle.no_grad():
            for batch in val_loader:
                images = paddle.to_tensor(batch[0]["data"])
                labels = paddle.to_tensor(batch[0]["label"])
                correct += int((model(images).argmax(axis=1) == labels.squeeze(-1)).sum())
                total += batch[0]["label"].shape()[0]
        val_loader.reset()
        print(f"epoch {epoch}: top-1 {correct / total:.4f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Paddle ImageNet training with DALI")
    parser.add_argument("data", metavar="DIR", help="path to the dataset (with train/ and val/)")
    parser.add_argument("-j", "--num_threads", default=4, type=int, help="DALI threads (default: 4)")
    parser.add_argument("-b", "--batch-size", default=128, type=int, help="mini-batch size per GPU (default: 128)")
    parser.add_argument("--lr", default=0.1, type=float, help="initial learning rate")
    parser.add_argument("--epochs", default=90, type=int, help="number of epochs")
    parser.add_argument("--print-freq", "-p", default=10, type=int, help="print frequency (default: 10)")
    main(parser.parse_args())
