"""Each sample copied to the host and read into NumPy, as DALI's examples inspect outputs."""
import numpy as np
import itertools
import nvidia.dali.experimental.dynamic as ndd

batch_size = 3


def get_batch():
    return [np.arange(12, dtype=np.int32).reshape(3, 4) * (i + 1) for i in range(batch_size)]


def transposed(*, batch_size=batch_size, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    source_2 = get_batch
    for source_data in map(lambda i: source_2(), itertools.count()):
        with ctx:
            data = ndd.batch(source_data, layout="HW")
            outputs = data, ndd.transpose(data, perm=[1, 0])
        yield outputs


pipe = transposed()
original, flipped = next(pipe)
for i in range(batch_size):
    a = np.array(original.select(i).cpu())
    b = np.asarray(flipped.select(i).cpu())
    print(i, a.dtype, a.shape, b.shape, (a.T == b).all())
    print(b)

# the batch copied into NumPy under its own name, as DALI's video examples do after each run
for _ in range(2):
    original, flipped = next(pipe)
    flipped = np.array(ndd.as_tensor(flipped.cpu()))
    print(flipped.shape, flipped[0, 0], flipped.sum(), (original.layout or ""))
