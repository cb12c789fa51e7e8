# golden-run: pipe=numpy_pipe args=(str(DATA / "numpy" / "f32_2d"),) iterations=6
import numpy as np
from nvidia.dali import fn, pipeline_def, types


@pipeline_def(batch_size=2, num_threads=1)
def numpy_pipe(root):
    data = fn.readers.numpy(file_root=root, file_filter="*.npy", name="NumpyReader")
    return fn.cast(data * 2.0, dtype=types.FLOAT64)


pipe = numpy_pipe("/data/numpy")
pipe.build()
(batch,) = pipe.run()
arrays = [np.array(batch[i]) for i in range(len(batch))]
