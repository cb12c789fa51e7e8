"""Constants made at the top of a notebook from a numpy array held in a variable, joined by two
pipelines built by hand (DALI's general/tensor_join.ipynb, cut down)."""
import nvidia.dali as dali
import nvidia.dali.fn as fn
import numpy as np

np.random.seed(1234)

arr = np.array(
    [
        [[1, 2, 3], [4, 5, 6]],
        [[7, 8, 9], [10, 11, 12]],
    ]
)

src1 = dali.types.Constant(arr)
src2 = dali.types.Constant(arr + 100)

pipe_cat = dali.pipeline.Pipeline(batch_size=1, num_threads=3, device_id=0)
with pipe_cat:
    cat_outer = fn.cat(src1, src2, axis=0)
    cat_inner = fn.cat(src1, src2, axis=2)
    pipe_cat.set_outputs(cat_outer, cat_inner)

pipe_cat.build()
o = pipe_cat.run()
print("Concatenation along outer axis:")
print(o[0].at(0))
print("Shape: ", o[0].at(0).shape)

pipe_stack = dali.pipeline.Pipeline(batch_size=1, num_threads=3, device_id=0)
with pipe_stack:
    st_outermost = fn.stack(src1, src2, axis=0)
    st_new_inner = fn.stack(src1, src2, axis=3)
    pipe_stack.set_outputs(st_outermost, st_new_inner)

pipe_stack.build()
o = pipe_stack.run()
print("Stacking - new innermost axis:")
print(o[1].at(0))
print("Shape: ", o[1].at(0).shape)
