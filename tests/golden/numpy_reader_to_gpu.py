# golden-run: pipe=volume_pipe args=(str(DATA / "numpy" / "f32_2d"),) iterations=7
"""Arrays moved to the GPU as they are read (`.gpu()` on the reader's call), as DeepCAM and
CosmoFlow read their .npy files, then scaled there."""
from nvidia.dali import fn, pipeline_def


@pipeline_def(batch_size=2, num_threads=2, device_id=0)
def volume_pipe(data_dir):
    volume = fn.readers.numpy(file_root=data_dir, file_filter="*.npy", name="Reader").gpu()
    volume = (volume - 0.5) / 2.0
    return volume


if __name__ == "__main__":
    import sys

    pipe = volume_pipe(sys.argv[1])
    pipe.build()
    print(pipe.epoch_size("Reader"), pipe.run()[0].as_cpu().at(0))
