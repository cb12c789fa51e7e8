# golden-run: pipe=raw_arrays args=(str(DATA / "numpy" / "f32_2d"),) iterations=6
# golden-verify: pipe=first_frames args=(sorted(str(p) for p in (DATA / "video").glob("*/*.avi")),) iterations=6
"""A reader of one output whose result the pipeline returns as it is: pipe.run() gives a 1-tuple."""
from nvidia.dali import fn, pipeline_def


@pipeline_def(batch_size=2, num_threads=1)
def raw_arrays(root):
    data = fn.readers.numpy(file_root=root, file_filter="*.npy", name="Reader")
    return data


@pipeline_def(batch_size=2, num_threads=1)
def first_frames(files):
    frames = fn.experimental.readers.video(device="cpu", filenames=files, sequence_length=2, step=5)
    return frames


pipe = raw_arrays("/data/numpy")
pipe.build()
(arrays,) = pipe.run()
print([arrays.at(i).shape for i in range(len(arrays))])
