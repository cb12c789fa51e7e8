# golden-verify: pipe=binary_pipeline args=((lambda x, y: x // y), "uint8", "int32") iterations=3
# golden-verify: pipe=binary_pipeline args=((lambda x, y: x / y), "uint8", "float32") iterations=3
# golden-verify: pipe=binary_pipeline args=((lambda x, y: x & y), "int16", "int16") iterations=3
"""A function that builds a pipeline by hand around an operation it is given, called with lambdas
from a table, as DALI's expr_type_promotions notebook does: the pipeline applied the operation
once, to DataNodes; the converted loop applies it to each batch, which is the same arithmetic."""
import numpy as np
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline

left_values = [40, 9]
right_values = [7, 3]


def sample_pair(left_type, right_type):
    return [np.array(left_values, dtype=left_type)], [np.array(right_values, dtype=right_type)]


def dali_type(type_name):
    return types.to_dali_type(np.dtype(type_name).name)


def binary_pipeline(operation, left_type, right_type):
    pipe = Pipeline(batch_size=1, num_threads=2, device_id=0)
    with pipe:
        left, right = fn.external_source(
            source=lambda: sample_pair(left_type, right_type),
            num_outputs=2,
            dtype=[dali_type(left_type), dali_type(right_type)],
        )
        pipe.set_outputs(left, right, operation(left, right))
    return pipe


def show(pipe, symbol):
    pipe.build()
    pipe_out = pipe.run()
    left = pipe_out[0].as_array()
    right = pipe_out[1].as_array()
    result = pipe_out[2].as_array()
    print(f"{left} {symbol} {right} = {result}  ({left.dtype} {symbol} {right.dtype} -> {result.dtype})")


pipe = binary_pipeline((lambda x, y: x + y), "uint8", "uint8")
show(pipe, "+")

operations = [
    ((lambda x, y: x - y), "-"),
    ((lambda x, y: x * y), "*"),
    ((lambda x, y: x / y), "/"),
    ((lambda x, y: x // y), "//"),
]

for operation, symbol in operations:
    for right_type in ["uint8", "int32", "float32"]:
        pipe = binary_pipeline(operation, "uint8", right_type)
        show(pipe, symbol)

for operation, symbol in [((lambda x, y: x & y), "&"), ((lambda x, y: x ^ y), "^")]:
    pipe = binary_pipeline(operation, "int16", "int16")
    show(pipe, symbol)
