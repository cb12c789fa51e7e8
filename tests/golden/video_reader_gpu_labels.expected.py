# golden-verify: pipe=labelled_video_pipe args=(sorted(str(p) for p in (DATA / "video_h264").glob("*/*.mp4")), [0, 0, 1, 1]) kwargs={"batch_size": 3} iterations=6 needs=("video_h264",) device=gpu
# golden-verify: pipe=indexed_video_pipe args=(sorted(str(p) for p in (DATA / "video_h264").glob("*/*.mp4")),) kwargs={"batch_size": 4} iterations=4 needs=("video_h264",) device=gpu
"""Action-recognition style input: labelled clips with the first frame's number and the frames'
timestamps, normalized to FCHW for a 3D CNN; an older script's fn.video_reader beside it."""
import argparse
import numpy as np

import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd

MEAN = [0.43216 * 255, 0.394666 * 255, 0.37645 * 255]
STD = [0.22803 * 255, 0.22145 * 255, 0.216989 * 255]


def labelled_video_pipe(files, labels, sequence_length=3, stride=2, *, batch_size, num_threads=4, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    with ctx:
        reader = ndd.readers.Video(
            device="gpu",
            filenames=files,
            labels=labels,
            sequence_length=sequence_length,
            stride=stride,
            enable_frame_num=True,
            enable_timestamps=True,
            random_shuffle=False,
        )
    while True:
        for video, label, frame_num, timestamps in reader.next_epoch(batch_size=batch_size, ctx=ctx):
            with ctx:
                video = ndd.crop_mirror_normalize(video, dtype=types.FLOAT, output_layout="FCHW", mean=MEAN, std=STD)
                outputs = video, label, frame_num, timestamps
            yield outputs


def indexed_video_pipe(files, sequence_length=8, *, batch_size, num_threads=2, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    # labels=[]: each file's index in `files` is its label
    with ctx:
        reader = ndd.readers.Video(device="gpu", filenames=files, labels=[],
                                             sequence_length=sequence_length, dtype=types.FLOAT)
    while True:
        for frames, file_index in reader.next_epoch(batch_size=batch_size, ctx=ctx):
            with ctx:
                outputs = frames, file_index
            yield outputs


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="+")
    parser.add_argument("--batch-size", type=int, default=8)
    args = parser.parse_args()
    labels = [0 if "left" in f else 1 for f in args.files]
    pipe = labelled_video_pipe(args.files, labels, batch_size=args.batch_size)
    for step in range(ndd.readers.Video(
        device="gpu",
        filenames=args.files,
        labels=labels,
        sequence_length=3,
        stride=2,
        enable_frame_num=True,
        enable_timestamps=True,
        random_shuffle=False,
    ).get_metadata()["epoch_size_padded"] // args.batch_size):
        video, label, frame_num, timestamps = next(pipe)
        print(np.array(ndd.as_tensor(video.cpu())).shape, np.array(ndd.as_tensor(label.cpu())).ravel(),
              np.array(ndd.as_tensor(frame_num.cpu())).ravel(), np.array(timestamps.cpu().select(0)))
