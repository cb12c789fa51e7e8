# golden-verify: pipe=video_pipe args=(str(DATA / "video_h264"),) kwargs={"batch_size": 3} iterations=7 device=gpu
"""The newer video reader on the GPU (fn.experimental.readers.video decodes with NVDEC there):
class folders as labels, each sequence's first frame number and its frames' timestamps."""
import sys
import numpy as np
import nvidia.dali.experimental.dynamic as ndd


def video_pipe(file_root, sequence_length=6, step=5, *, batch_size, num_threads=2, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    with ctx:
        reader = ndd.experimental.readers.Video(
            device="gpu",
            file_root=file_root,
            sequence_length=sequence_length,
            step=step,
            enable_frame_num=True,
            enable_timestamps=True,
            random_shuffle=False,
        )
    while True:
        for frames, labels, frame_idx, timestamps in reader.next_epoch(batch_size=batch_size, ctx=ctx):
            with ctx:
                frames = ndd.resize(frames, resize_x=64, resize_y=48)
                outputs = frames, labels, frame_idx, timestamps
            yield outputs


if __name__ == "__main__":
    pipe = video_pipe(sys.argv[1], batch_size=4)
    frames, labels, frame_idx, timestamps = next(pipe)
    for i in range(frames.batch_size):
        print(np.array(frames.cpu().select(i)).shape, np.array(labels.cpu().select(i)), np.array(frame_idx.cpu().select(i)), np.array(timestamps.cpu().select(i)))
