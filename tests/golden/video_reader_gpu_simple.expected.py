# golden-verify: pipe=video_pipe args=(sorted(str(p) for p in (DATA / "video_h264").glob("*/*.mp4")),) kwargs={"batch_size": 4} iterations=7 needs=("video_h264",) device=gpu
"""DALI's video_reader_simple_example: the GPU reader over a list of files, frames only."""
import glob
import os

import numpy as np
import secrets
import nvidia.dali.experimental.dynamic as ndd

SEQUENCE_LENGTH = 4
INITIAL_PREFETCH_SIZE = 11
N_ITER = 6


def video_pipe(filenames, *, batch_size, num_threads=2, device_id=0, seed=1234):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    with ctx:
        reader = ndd.readers.Video(
            device="gpu",
            filenames=filenames,
            sequence_length=SEQUENCE_LENGTH,
            shard_id=0,
            num_shards=1,
            random_shuffle=True,
            initial_fill=INITIAL_PREFETCH_SIZE,
            seed=seed_or_random,
        )
    while True:
        for (videos,) in reader.next_epoch(batch_size=batch_size, ctx=ctx):
            with ctx:
                outputs = (videos,)
            yield outputs


if __name__ == "__main__":
    video_directory = os.path.join(os.environ["DALI_EXTRA_PATH"], "db", "video", "small")
    video_files = sorted(glob.glob(os.path.join(video_directory, "*.mp4")))
    pipe = video_pipe(video_files, batch_size=2)
    for i in range(N_ITER):
        (sequences_out,) = next(pipe)
        sequences_out = np.array(ndd.as_tensor(sequences_out.cpu()))
        print(sequences_out.shape, np.mean(sequences_out))
