"""Inputs fed from outside the pipeline before each run (pipe.feed_input), as inference code does:
the pipeline becomes a function of the fed batch, the feed moves into the call."""
import numpy as np
from nvidia.dali import types
import nvidia.dali.experimental.dynamic as ndd


def external_source_batch(data, dtype, copy=False, **kwargs):
    """fn.external_source(dtype=...) as a pipeline runs it (added by dali-migrate): the source's
    data must already be of that type; ndd.as_batch(dtype=...) would convert it instead."""
    if isinstance(data, (list, tuple)) and not data:
        return (ndd.batch if copy else ndd.as_batch)(data, dtype=dtype, **kwargs)
    batch = (ndd.batch if copy else ndd.as_batch)(data, **kwargs)
    if batch.dtype != ndd.dtype(dtype):
        raise RuntimeError(
            f"ExternalSource expected data of type {ndd.dtype(dtype)} and got: {batch.dtype}"
        )
    return batch


def infer_pipe(*, batch_size=2, num_threads=2, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)

    def run(**pipeline_inputs):
        with ctx:
            jpegs = external_source_batch(pipeline_inputs["jpegs"], types.UINT8, copy=True)
            images = ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB)
            outputs = (ndd.resize(images, resize_x=224, resize_y=224),)
            for output in outputs:
                output.evaluate()  # raises here if the run failed, as pipe.run() did
            return outputs

    return run


pipe = infer_pipe()
for files in [["a.jpg", "b.jpg"], ["c.jpg", "d.jpg"]]:
    (images,) = pipe(jpegs=[np.fromfile(f, dtype=np.uint8) for f in files])
