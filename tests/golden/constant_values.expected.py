# golden-run: pipe=constant_pipe args=(str(DATA / "images"),) iterations=7
"""Constants as real pipelines write them: scalars and arrays in arithmetic, constant batches as
operator inputs, arguments and outputs."""
import numpy as np
from nvidia.dali import types
import nvidia.dali.experimental.dynamic as ndd


def constant_pipe(root, *, batch_size=4, num_threads=2, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=root)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, output_type=types.RGB)
                images = ndd.resize(images, resize_x=8, resize_y=8)
                scaled = images * 2.0
                shifted = 3 + labels
                is_one = labels == 1
                weighted = images * [1.25, 0.75, 0.5]
                spread = [1, 2, 3] * images
                wide = labels * ndd.tensor(3, dtype=ndd.int64)
                darker = images - ndd.tensor(10, dtype=ndd.uint8)
                precise = ndd.tensor(0.5, dtype=ndd.float64) * images
                base = (-2.5) ** labels
                scale = 0.5
                halves = images * scale + scale
                clamped = ndd.math.clamp(images, 10, 200)
                table = ndd.Batch.broadcast(ndd.tensor([[1, 2], [3, 4]], dtype=ndd.uint8, layout="HW"), batch_size)
                ones = ndd.Batch.broadcast(ndd.full(ndd.tensor(1.0, dtype=ndd.float32), shape=[8, 8, 3], layout="HWC"), batch_size)
                stacked = ndd.cat(images, ndd.cast(ones, dtype=types.UINT8), axis=2)
                rotated = ndd.rotate(images, angle=30, fill_value=0)
                turned = ndd.rotate(images, angle=ndd.Batch.broadcast(ndd.tensor(90.0, dtype=ndd.float32), batch_size), fill_value=0)
                negated = -ndd.Batch.broadcast(ndd.tensor([1.0, 2.0], dtype=ndd.float32), batch_size)
                flags = ndd.Batch.broadcast(ndd.tensor([True, False, True], dtype=ndd.bool), batch_size)
                big = ndd.Batch.broadcast(ndd.tensor([1099511627776, -5], dtype=ndd.int64), batch_size)
                half = ndd.Batch.broadcast(ndd.tensor([0.5, 1.5], dtype=ndd.float16), batch_size)
                grid = ndd.Batch.broadcast(ndd.tensor([[1, 2], [3, 4]], dtype=ndd.int32), batch_size)
                layout_vec = ndd.Batch.broadcast(ndd.tensor([0.25, 0.5], dtype=ndd.float32, layout="C"), batch_size)
                count = ndd.Batch.broadcast(ndd.tensor([3], dtype=ndd.int32), batch_size)
                offset = ndd.Batch.broadcast(ndd.tensor(3, dtype=ndd.int64), batch_size)
                moved = labels + offset
                channel_scale = [1.0, 2.0, 3.0]
                per_channel = images * channel_scale
                plus_one = images + [1, 1, 1]
                outputs = (
                    scaled, shifted, is_one, weighted, spread, wide, darker, precise, base, halves, clamped,
                    table, ones, stacked, rotated, turned, negated, flags, big, half, grid, layout_vec, count,
                    moved, offset, per_channel, plus_one,
                    ndd.Batch.broadcast(ndd.tensor(7, dtype=ndd.int32), batch_size), ndd.Batch.broadcast(ndd.tensor(5, dtype=ndd.int32), batch_size), ndd.Batch.broadcast(ndd.full(ndd.tensor(2.5, dtype=ndd.float32), shape=[2]), batch_size),
                )
            yield outputs
