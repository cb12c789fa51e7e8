# golden-verify: pipe=binary_pipeline args=((lambda x, y: x // y), "uint8", "int32") iterations=3
# golden-verify: pipe=binary_pipeline args=((lambda x, y: x / y), "uint8", "float32") iterations=3
# golden-verify: pipe=binary_pipeline args=((lambda x, y: x & y), "int16", "int16") iterations=3
"""A function that builds a pipeline by hand around an operation it is given, called with lambdas
from a table, as DALI's expr_type_promotions notebook does: the pipeline applied the operation
once, to DataNodes; the converted loop applies it to each batch, which is the same arithmetic."""
import numpy as np
import itertools
import nvidia.dali.types as types
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


left_values = [40, 9]
right_values = [7, 3]


def sample_pair(left_type, right_type):
    return [np.array(left_values, dtype=left_type)], [np.array(right_values, dtype=right_type)]


def dali_type(type_name):
    return types.to_dali_type(np.dtype(type_name).name)


def binary_pipeline(operation, left_type, right_type):
    def pipe_batches(*, batch_size=1, num_threads=2, device_id=0, seed=None):
        ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
        # evaluated once, as when the pipeline was built
        dtype = dali_type(left_type)
        dtype_2 = dali_type(right_type)
        source_2 = lambda: sample_pair(left_type, right_type)

        # the code above runs when the pipeline is made, as in pipeline mode
        def batches():
            for source_data in map(lambda i: source_2(), itertools.count()):
                with ctx:
                    left, right = external_source_batch(source_data[0], dtype, copy=True), external_source_batch(source_data[1], dtype_2, copy=True)
                    outputs = left, right, operation(left, right)
                yield outputs

        return batches()

    pipe = pipe_batches()
    return pipe


def show(pipe, symbol):
    pipe_out = next(pipe)
    left = np.array(ndd.as_tensor(pipe_out[0]))
    right = np.array(ndd.as_tensor(pipe_out[1]))
    result = np.array(ndd.as_tensor(pipe_out[2]))
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
