# golden-run: pipe=volume_pipe args=(str(DATA / "numpy" / "f32_2d"),) iterations=7
"""Arrays moved to the GPU as they are read (`.gpu()` on the reader's call), as DeepCAM and
CosmoFlow read their .npy files, then scaled there."""
import numpy as np
import nvidia.dali.experimental.dynamic as ndd


def volume_pipe(data_dir, *, batch_size=2, num_threads=2, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.Numpy(file_root=data_dir, file_filter="*.npy")
    while True:
        for (volume,) in reader.next_epoch(batch_size=batch_size):
            with ctx:
                volume = volume.gpu()
                volume = (volume - 0.5) / 2.0
                outputs = (volume,)
            yield outputs


if __name__ == "__main__":
    import sys

    pipe = volume_pipe(sys.argv[1])
    print(ndd.readers.Numpy(file_root=sys.argv[1], file_filter="*.npy").get_metadata()["epoch_size_padded"], np.array(next(pipe)[0].cpu().select(0)))
