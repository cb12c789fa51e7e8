"""Constants made at the top of a notebook from a numpy array held in a variable, joined by two
pipelines built by hand (DALI's general/tensor_join.ipynb, cut down)."""
import nvidia.dali.experimental.dynamic as ndd
import numpy as np

np.random.seed(1234)

arr = np.array(
    [
        [[1, 2, 3], [4, 5, 6]],
        [[7, 8, 9], [10, 11, 12]],
    ]
)

def pipe_cat_batches(*, batch_size=1, num_threads=3, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    while True:
        with ctx:
            src1 = ndd.Batch.broadcast(ndd.tensor([[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]]], dtype=ndd.int32), batch_size)
            src2 = ndd.Batch.broadcast(ndd.tensor([[[101, 102, 103], [104, 105, 106]], [[107, 108, 109], [110, 111, 112]]], dtype=ndd.int32), batch_size)
            cat_outer = ndd.cat(src1, src2, axis=0)
            cat_inner = ndd.cat(src1, src2, axis=2)
            outputs = cat_outer, cat_inner
        yield outputs

pipe_cat = pipe_cat_batches()
o = next(pipe_cat)
print("Concatenation along outer axis:")
print(np.array(o[0].select(0)))
print("Shape: ", np.array(o[0].select(0)).shape)

def pipe_stack_batches(*, batch_size=1, num_threads=3, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    while True:
        with ctx:
            src1 = ndd.Batch.broadcast(ndd.tensor([[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]]], dtype=ndd.int32), batch_size)
            src2 = ndd.Batch.broadcast(ndd.tensor([[[101, 102, 103], [104, 105, 106]], [[107, 108, 109], [110, 111, 112]]], dtype=ndd.int32), batch_size)
            st_outermost = ndd.stack(src1, src2, axis=0)
            st_new_inner = ndd.stack(src1, src2, axis=3)
            outputs = st_outermost, st_new_inner
        yield outputs

pipe_stack = pipe_stack_batches()
o = next(pipe_stack)
print("Stacking - new innermost axis:")
print(np.array(o[1].select(0)))
print("Shape: ", np.array(o[1].select(0)).shape)
