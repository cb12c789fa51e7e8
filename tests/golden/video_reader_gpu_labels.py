# golden-verify: pipe=labelled_video_pipe args=(sorted(str(p) for p in (DATA / "video_h264").glob("*/*.mp4")), [0, 0, 1, 1]) kwargs={"batch_size": 3} iterations=6 needs=("video_h264",) device=gpu
# golden-verify: pipe=indexed_video_pipe args=(sorted(str(p) for p in (DATA / "video_h264").glob("*/*.mp4")),) kwargs={"batch_size": 4} iterations=4 needs=("video_h264",) device=gpu
"""Action-recognition style input: labelled clips with the first frame's number and the frames'
timestamps, normalized to FCHW for a 3D CNN; an older script's fn.video_reader beside it."""
import argparse

import nvidia.dali.types as types
from nvidia.dali import fn, pipeline_def

MEAN = [0.43216 * 255, 0.394666 * 255, 0.37645 * 255]
STD = [0.22803 * 255, 0.22145 * 255, 0.216989 * 255]


@pipeline_def(num_threads=4, device_id=0)
def labelled_video_pipe(files, labels, sequence_length=3, stride=2):
    video, label, frame_num, timestamps = fn.readers.video(
        device="gpu",
        filenames=files,
        labels=labels,
        sequence_length=sequence_length,
        stride=stride,
        enable_frame_num=True,
        enable_timestamps=True,
        random_shuffle=False,
        name="Reader",
    )
    video = fn.crop_mirror_normalize(video, dtype=types.FLOAT, output_layout="FCHW", mean=MEAN, std=STD)
    return video, label, frame_num, timestamps


@pipeline_def(num_threads=2, device_id=0)
def indexed_video_pipe(files, sequence_length=8):
    # labels=[]: each file's index in `files` is its label
    frames, file_index = fn.video_reader(device="gpu", filenames=files, labels=[],
                                         sequence_length=sequence_length, dtype=types.FLOAT)
    return frames, file_index


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="+")
    parser.add_argument("--batch-size", type=int, default=8)
    args = parser.parse_args()
    labels = [0 if "left" in f else 1 for f in args.files]
    pipe = labelled_video_pipe(args.files, labels, batch_size=args.batch_size)
    pipe.build()
    for step in range(pipe.epoch_size("Reader") // args.batch_size):
        video, label, frame_num, timestamps = pipe.run()
        print(video.as_cpu().as_array().shape, label.as_cpu().as_array().ravel(),
              frame_num.as_cpu().as_array().ravel(), timestamps.as_cpu().at(0))
