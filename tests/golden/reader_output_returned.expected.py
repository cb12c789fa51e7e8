# golden-run: pipe=raw_arrays args=(str(DATA / "numpy" / "f32_2d"),) iterations=6
# golden-verify: pipe=first_frames args=(sorted(str(p) for p in (DATA / "video").glob("*/*.avi")),) iterations=6
"""A reader of one output whose result the pipeline returns as it is: pipe.run() gives a 1-tuple."""
import numpy as np
import nvidia.dali.experimental.dynamic as ndd


def raw_arrays(root, *, batch_size=2, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.Numpy(file_root=root, file_filter="*.npy")
    while True:
        for (data,) in reader.next_epoch(batch_size=batch_size):
            with ctx:
                outputs = (data,)
            yield outputs


def first_frames(files, *, batch_size=2, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.experimental.readers.Video(device="cpu", filenames=files, sequence_length=2, step=5)
    while True:
        for (frames,) in reader.next_epoch(batch_size=batch_size):
            with ctx:
                outputs = (frames,)
            yield outputs


pipe = raw_arrays("/data/numpy")
(arrays,) = next(pipe)
print([np.array(arrays.select(i)).shape for i in range(arrays.batch_size)])
