"""Cells of a notebook that each build a pipeline by hand in the same variable, run it once into
`out` and print it with a helper the cell defines again, as DALI's expr_examples notebook does:
each `pipe`, and each `out`, is that cell's pipeline's until the next cell binds it again."""
import numpy as np
import itertools
import nvidia.dali.experimental.dynamic as ndd

batch_size = 2


def get_pairs():
    left = [np.array([[12, 5], [0, 9]], dtype=np.int32), np.array([[3, 30], [300, 7]], dtype=np.int32)]
    right = [np.array([[2, 5], [1, 4]], dtype=np.int32), np.array([[3, 3], [7, 2]], dtype=np.int32)]
    return left, right


def pipe_batches(*, batch_size=batch_size, num_threads=2, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    source_2 = get_pairs
    for source_data in map(lambda i: source_2(), itertools.count()):
        with ctx:
            l, r = ndd.batch(source_data[0]), ndd.batch(source_data[1])
            outputs = l, r, l + r, l * r, l // r
        yield outputs

pipe = pipe_batches()
out = next(pipe)


def show(pipe_out):
    for i, symbol in enumerate(["+", "*", "//"]):
        result = np.array(ndd.as_tensor(pipe_out[2 + i]))
        print(f"l {symbol} r =\n{result}\n{result.dtype}")


show(out)

def pipe_batches_45(*, batch_size=batch_size, num_threads=2, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    source_2 = get_pairs
    for source_data in map(lambda i: source_2(), itertools.count()):
        source_batch_size = len(source_data[0])
        with ctx:
            l, r = ndd.batch(source_data[0]), ndd.batch(source_data[1])
            outputs = l * 0.5, 20.0 - r, ndd.tensor(3, dtype=ndd.uint8) * r
        yield outputs

pipe = pipe_batches_45()
out = next(pipe)


def show(pipe_out):
    for name, batch in zip(["l * 0.5", "20 - r", "3 * r"], pipe_out):
        print(f"{name} =\n{np.array(ndd.as_tensor(batch))}\n{np.array(ndd.as_tensor(batch)).dtype}")


show(out)

def pipe_batches_46(*, batch_size=batch_size, num_threads=2, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    end = object()
    source_2 = lambda: get_pairs()[0]
    source_iter = map(lambda i: source_2(), itertools.count())
    source_3 = lambda: np.arange(1, batch_size + 1, dtype=np.int32)
    source_iter_2 = map(lambda i: source_3(), itertools.count())
    while True:
        source_data = next(source_iter, end)
        source_data_2 = next(source_iter_2, end)
        if source_data is end or source_data_2 is end:
            return
        with ctx:
            tensors = ndd.batch(source_data)
            scalars = ndd.batch(source_data_2)
            outputs = (tensors + scalars,)
        yield outputs

pipe = pipe_batches_46()
out = next(pipe)
print(np.array(ndd.as_tensor(out[0])), np.array(ndd.as_tensor(out[0])).dtype)
