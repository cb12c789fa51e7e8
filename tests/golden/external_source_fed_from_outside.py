"""Inputs fed from outside the pipeline before each run (pipe.feed_input), as inference code does:
the pipeline becomes a function of the fed batch, the feed moves into the call."""
import numpy as np
from nvidia.dali import fn, pipeline_def, types


@pipeline_def(batch_size=2, num_threads=2, device_id=0, prefetch_queue_depth=1)
def infer_pipe():
    jpegs = fn.external_source(name="jpegs", dtype=types.UINT8)
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    return fn.resize(images, resize_x=224, resize_y=224)


pipe = infer_pipe()
pipe.build()
for files in [["a.jpg", "b.jpg"], ["c.jpg", "d.jpg"]]:
    pipe.feed_input("jpegs", [np.fromfile(f, dtype=np.uint8) for f in files])
    (images,) = pipe.run()
