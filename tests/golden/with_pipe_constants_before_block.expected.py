"""Constants made at the top of a notebook, outside any pipeline, and joined by two pipelines built
by hand, as DALI's general/tensor_join.ipynb does (there with a numpy array held in a variable)."""
import nvidia.dali.experimental.dynamic as ndd
import numpy as np

def pipe_cat_batches(*, batch_size=2, num_threads=3, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    while True:
        with ctx:
            src1 = ndd.Batch.broadcast(ndd.tensor([[1, 2, 3], [4, 5, 6]], dtype=ndd.int32), batch_size)
            src2 = ndd.Batch.broadcast(ndd.tensor([[101, 102, 103], [104, 105, 106]], dtype=ndd.int32), batch_size)
            cat_outer = ndd.cat(src1, src2, axis=0)
            cat_inner = ndd.cat(src1, src2, axis=1)
            outputs = cat_outer, cat_inner
        yield outputs

pipe_cat = pipe_cat_batches()
o = next(pipe_cat)
print("Concatenation along outer axis:")
print(np.array(o[0].select(0)))
print("Shape: ", np.array(o[0].select(1)).shape)
print(np.array(o[1].select(0)))

def pipe_stack_batches(*, batch_size=2, num_threads=3, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    while True:
        with ctx:
            src1 = ndd.Batch.broadcast(ndd.tensor([[1, 2, 3], [4, 5, 6]], dtype=ndd.int32), batch_size)
            src2 = ndd.Batch.broadcast(ndd.tensor([[101, 102, 103], [104, 105, 106]], dtype=ndd.int32), batch_size)
            scale = ndd.Batch.broadcast(ndd.tensor([10, 20, 30], dtype=ndd.int32, layout="X"), batch_size)
            st_outermost = ndd.stack(src1, src2, axis=0)
            st_new_inner = ndd.stack(src1, src2, axis=2)
            outputs = st_outermost, st_new_inner, ndd.cat(scale, scale)
        yield outputs

pipe_stack = pipe_stack_batches()
o = next(pipe_stack)
print("Stacking:")
for out in o:
    print(np.array(out.select(1)), np.array(out.select(1)).shape)
