"""Cells of a notebook that each build a pipeline by hand in the same variable, run it once into
`out` and print it with a helper the cell defines again, as DALI's expr_examples notebook does:
each `pipe`, and each `out`, is that cell's pipeline's until the next cell binds it again."""
import numpy as np
from nvidia.dali.pipeline import Pipeline
import nvidia.dali.fn as fn
from nvidia.dali.types import Constant

batch_size = 2


def get_pairs():
    left = [np.array([[12, 5], [0, 9]], dtype=np.int32), np.array([[3, 30], [300, 7]], dtype=np.int32)]
    right = [np.array([[2, 5], [1, 4]], dtype=np.int32), np.array([[3, 3], [7, 2]], dtype=np.int32)]
    return left, right


pipe = Pipeline(batch_size=batch_size, num_threads=2, device_id=0)
with pipe:
    l, r = fn.external_source(source=get_pairs, num_outputs=2)
    pipe.set_outputs(l, r, l + r, l * r, l // r)

pipe.build()
out = pipe.run()


def show(pipe_out):
    for i, symbol in enumerate(["+", "*", "//"]):
        result = pipe_out[2 + i].as_array()
        print(f"l {symbol} r =\n{result}\n{result.dtype}")


show(out)

pipe = Pipeline(batch_size=batch_size, num_threads=2, device_id=0)
with pipe:
    l, r = fn.external_source(source=get_pairs, num_outputs=2)
    pipe.set_outputs(l * 0.5, Constant(20).float32() - r, Constant(3).uint8() * r)

pipe.build()
out = pipe.run()


def show(pipe_out):
    for name, batch in zip(["l * 0.5", "20 - r", "3 * r"], pipe_out):
        print(f"{name} =\n{batch.as_array()}\n{batch.as_array().dtype}")


show(out)

pipe = Pipeline(batch_size=batch_size, num_threads=2, device_id=0)
with pipe:
    tensors = fn.external_source(lambda: get_pairs()[0])
    scalars = fn.external_source(lambda: np.arange(1, batch_size + 1, dtype=np.int32))
    pipe.set_outputs(tensors + scalars)

pipe.build()
out = pipe.run()
print(out[0].as_array(), out[0].as_array().dtype)
