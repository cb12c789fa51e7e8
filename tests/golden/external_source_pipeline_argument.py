# golden-run: pipe=reshape_pipe args=(lambda: __import__("numpy").random.randint(0, 10, size=[25], dtype="int32"),) iterations=1
# (one iteration: `verify` runs the pipeline and the generator in turn, so after the first
# batch their draws from numpy's global random state interleave)
"""Reshaping per-sample data that comes in as the pipeline's argument (after DALI's reinterpret example)."""
import numpy as np
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import pipeline_def


@pipeline_def(batch_size=3, num_threads=4, device_id=0)
def reshape_pipe(input_data):
    np.random.seed(1234)
    inp = fn.external_source(input_data, batch=False, dtype=types.INT32)
    return inp, fn.reshape(inp, shape=[5, 5], layout="HW")


pipe = reshape_pipe(lambda: np.random.randint(0, 10, size=[25], dtype=np.int32))
pipe.build()
flat, square = pipe.run()
for i in range(len(flat)):
    print(f"sample {i}:", np.array(flat[i]).shape, "->", np.array(square[i]).shape)
    print(np.array(square[i]))
