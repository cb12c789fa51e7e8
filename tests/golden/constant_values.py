# golden-run: pipe=constant_pipe args=(str(DATA / "images"),) iterations=7
"""Constants as real pipelines write them: scalars and arrays in arithmetic, constant batches as
operator inputs, arguments and outputs."""
import numpy as np
import nvidia.dali.math as dmath
from nvidia.dali import fn, pipeline_def, types


@pipeline_def(batch_size=4, num_threads=2)
def constant_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    images = fn.resize(images, resize_x=8, resize_y=8)
    scaled = images * types.Constant(2.0)
    shifted = types.Constant(3) + labels
    is_one = labels == types.Constant(1)
    weighted = images * types.Constant(np.float32([1.25, 0.75, 0.5]))
    spread = types.Constant([1, 2, 3]) * images
    wide = labels * types.Constant(3, dtype=types.INT64)
    darker = images - types.Constant(10, dtype=types.UINT8)
    precise = types.Constant(0.5, dtype=types.FLOAT64) * images
    base = types.Constant(-2.5) ** labels
    scale = types.Constant(0.5)
    halves = images * scale + scale
    clamped = dmath.clamp(images, types.Constant(10), types.Constant(200))
    table = fn.constant(idata=[1, 2, 3, 4], shape=[2, 2], dtype=types.UINT8, layout="HW")
    ones = fn.constant(fdata=1.0, shape=[8, 8, 3], layout="HWC")
    stacked = fn.cat(images, fn.cast(ones, dtype=types.UINT8), axis=2)
    rotated = fn.rotate(images, angle=types.Constant(30), fill_value=0)
    turned = fn.rotate(images, angle=fn.constant(fdata=90.0, shape=[]), fill_value=0)
    negated = -fn.constant(fdata=[1.0, 2.0])
    flags = fn.constant(idata=[1, 0, 1], dtype=types.BOOL)
    big = fn.constant(idata=[1099511627776, -5], dtype=types.INT64)
    half = fn.constant(fdata=[0.5, 1.5], dtype=types.FLOAT16)
    grid = types.Constant(np.array([[1, 2], [3, 4]]))
    layout_vec = types.Constant(np.float32([0.25, 0.5]), layout="C")
    count = fn.constant(idata=3)
    offset = types.Constant(3, dtype=types.INT64)
    moved = labels + offset
    channel_scale = fn.constant(fdata=[1.0, 2.0, 3.0])
    per_channel = images * channel_scale
    plus_one = images + fn.constant(idata=1, shape=[3])
    return (
        scaled, shifted, is_one, weighted, spread, wide, darker, precise, base, halves, clamped,
        table, ones, stacked, rotated, turned, negated, flags, big, half, grid, layout_vec, count,
        moved, offset, per_channel, plus_one,
        types.Constant(7), types.Constant(5, device="cpu"), types.Constant(2.5, shape=[2]),
    )
