"""Data nodes made outside the pipeline from values the conversion cannot read, or from values the
file changes before the pipeline runs, stay with the pipelines that use them."""
import nvidia.dali as dali
import nvidia.dali.fn as fn
import numpy as np

arr = np.arange(1, 5).reshape(2, 2)
src1 = dali.types.Constant(arr)
src2 = dali.types.Constant(arr + 100)

pipe_cat = dali.pipeline.Pipeline(batch_size=1, num_threads=3, device_id=0)
with pipe_cat:
    cat_outer = fn.cat(src1, src2, axis=0)
    pipe_cat.set_outputs(cat_outer)

pipe_cat.build()
print(pipe_cat.run()[0].at(0))

bounds = [0.0, 1.0]
noise = fn.random.uniform(range=bounds, shape=[3])
bounds.append(2.0)

pipe_noise = dali.pipeline.Pipeline(batch_size=1, num_threads=3, device_id=0, seed=7)
with pipe_noise:
    pipe_noise.set_outputs(noise * 2)

pipe_noise.build()
print(pipe_noise.run()[0].at(0))
