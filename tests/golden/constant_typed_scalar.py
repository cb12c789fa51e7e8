# golden-run: pipe=typed_constants args=(str(DATA / "images"),) iterations=7
"""Scalar constants given a type with ScalarConstant's methods, as DALI's expression examples write
them (`Constant(15).float32() - r`): the typed value in arithmetic and as an operator argument."""
from nvidia.dali import fn, pipeline_def, types
from nvidia.dali.types import Constant


@pipeline_def(batch_size=4, num_threads=2)
def typed_constants(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    images = fn.resize(images, resize_x=8, resize_y=8)
    from_fifteen = Constant(15).float32() - labels
    narrow = images * Constant(2).uint8()
    wide = labels + types.Constant(3).int64()
    truncated = images // Constant(2.75).int32()
    halved = (Constant(1).float64()) / images
    flags = labels == Constant(1).bool()
    step = Constant(0.5).float32()
    stepped = images * step + step
    rotated = fn.rotate(images, angle=Constant(90).float32(), fill_value=0)
    return from_fifteen, narrow, wide, truncated, halved, flags, stepped, rotated
