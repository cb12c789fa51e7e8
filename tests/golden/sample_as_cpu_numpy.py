"""Each sample copied to the host and read into NumPy, as DALI's examples inspect outputs."""
import numpy as np
import nvidia.dali.fn as fn
from nvidia.dali import pipeline_def

batch_size = 3


def get_batch():
    return [np.arange(12, dtype=np.int32).reshape(3, 4) * (i + 1) for i in range(batch_size)]


@pipeline_def(batch_size=batch_size, num_threads=1, device_id=None)
def transposed():
    data = fn.external_source(source=get_batch, layout="HW")
    return data, fn.transpose(data, perm=[1, 0])


pipe = transposed()
pipe.build()
original, flipped = pipe.run()
for i in range(batch_size):
    a = np.array(original[i].as_cpu())
    b = np.asarray(flipped[i].as_cpu())
    print(i, a.dtype, a.shape, b.shape, (a.T == b).all())
    print(b)

# the batch copied into NumPy under its own name, as DALI's video examples do after each run
for _ in range(2):
    original, flipped = pipe.run()
    flipped = flipped.as_cpu().as_array()
    print(flipped.shape, flipped[0, 0], flipped.sum(), original.layout())
