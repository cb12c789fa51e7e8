# golden-run: pipe=numpy_pipe args=(str(DATA / "numpy" / "f32_2d"),) iterations=6
import numpy as np
from nvidia.dali import types
import nvidia.dali.experimental.dynamic as ndd


def numpy_pipe(root, *, batch_size=2, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.Numpy(file_root=root, file_filter="*.npy")
    while True:
        for (data,) in reader.next_epoch(batch_size=batch_size):
            with ctx:
                outputs = (ndd.cast(data * 2.0, dtype=types.FLOAT64),)
            yield outputs


pipe = numpy_pipe("/data/numpy")
(batch,) = next(pipe)
arrays = [np.array(batch.select(i)) for i in range(batch.batch_size)]
