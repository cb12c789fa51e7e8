"""Constants made at the top of a notebook, outside any pipeline, and joined by two pipelines built
by hand, as DALI's general/tensor_join.ipynb does (there with a numpy array held in a variable)."""
import nvidia.dali as dali
import nvidia.dali.fn as fn
import numpy as np

src1 = dali.types.Constant(np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32))
src2 = dali.types.Constant(np.array([[101, 102, 103], [104, 105, 106]], dtype=np.int32))
scale = dali.types.Constant([10, 20, 30], layout="X")

# dali-migrate: [legacy-pipeline] not converted: the graph uses a DataNode made before the `with` block from `np`, which the file changes afterwards: the converted pipeline would make it when it first runs; convert by hand
pipe_cat = dali.pipeline.Pipeline(batch_size=2, num_threads=3, device_id=None)
with pipe_cat:
    cat_outer = fn.cat(src1, src2, axis=0)
    cat_inner = fn.cat(src1, src2, axis=1)
    pipe_cat.set_outputs(cat_outer, cat_inner)

pipe_cat.build()
o = pipe_cat.run()
print("Concatenation along outer axis:")
print(o[0].at(0))
print("Shape: ", o[0].at(1).shape)
print(o[1].at(0))

# dali-migrate: [legacy-pipeline] not converted: the graph uses a DataNode made before the `with` block from `np`, which the file changes afterwards: the converted pipeline would make it when it first runs; convert by hand
pipe_stack = dali.pipeline.Pipeline(batch_size=2, num_threads=3, device_id=None)
with pipe_stack:
    st_outermost = fn.stack(src1, src2, axis=0)
    st_new_inner = fn.stack(src1, src2, axis=2)
    pipe_stack.set_outputs(st_outermost, st_new_inner, fn.cat(scale, scale))

pipe_stack.build()
o = pipe_stack.run()
print("Stacking:")
for out in o:
    print(out.at(1), out.at(1).shape)
