# golden-run: pipe=clip_pipe args=(sorted(str(p) for p in (DATA / "video").glob("*/*.avi")),) iterations=6
import glob
import numpy as np
import nvidia.dali.experimental.dynamic as ndd


def clip_pipe(files, sequence_length=4, *, batch_size=2, num_threads=2, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    # filenames without labels: the reader gives the frames alone
    reader = ndd.experimental.readers.Video(
        device="cpu", filenames=files, sequence_length=sequence_length)
    while True:
        for (frames,) in reader.next_epoch(batch_size=batch_size):
            with ctx:
                frames = ndd.flip(frames, horizontal=1)
                outputs = (frames,)
            yield outputs


if __name__ == "__main__":
    files = sorted(glob.glob("data/videos/*/*.avi"))
    pipe = clip_pipe(files)
    for _ in range(ndd.experimental.readers.Video(
        device="cpu", filenames=files, sequence_length=4).get_metadata()["epoch_size_padded"] // 2):
        (frames,) = next(pipe)
        print(np.array(ndd.as_tensor(frames)).shape)
