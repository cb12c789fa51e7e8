# golden-verify: pipe=video_pipe args=(str(DATA / "video_h264"),) kwargs={"batch_size": 3} iterations=7 device=gpu
"""The newer video reader on the GPU (fn.experimental.readers.video decodes with NVDEC there):
class folders as labels, each sequence's first frame number and its frames' timestamps."""
import sys

from nvidia.dali import fn, pipeline_def


@pipeline_def(num_threads=2, device_id=0)
def video_pipe(file_root, sequence_length=6, step=5):
    frames, labels, frame_idx, timestamps = fn.experimental.readers.video(
        device="gpu",
        file_root=file_root,
        sequence_length=sequence_length,
        step=step,
        enable_frame_num=True,
        enable_timestamps=True,
        random_shuffle=False,
        name="Reader",
    )
    frames = fn.resize(frames, resize_x=64, resize_y=48)
    return frames, labels, frame_idx, timestamps


if __name__ == "__main__":
    pipe = video_pipe(sys.argv[1], batch_size=4)
    pipe.build()
    frames, labels, frame_idx, timestamps = pipe.run()
    for i in range(len(frames)):
        print(frames.as_cpu().at(i).shape, labels.as_cpu().at(i), frame_idx.as_cpu().at(i), timestamps.as_cpu().at(i))
