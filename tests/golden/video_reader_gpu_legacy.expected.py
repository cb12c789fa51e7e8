# golden-verify: pipe=VideoPipe kwargs={"batch_size": 2, "num_threads": 2, "device_id": 0, "data": str(DATA / "video_h264")} iterations=8 device=gpu
# golden-verify: pipe=FileListVideoPipe kwargs={"batch_size": 2, "num_threads": 2, "device_id": 0, "file_list": str(DATA / "video_h264_list.txt")} iterations=8 needs=("video_h264",) device=gpu
"""The legacy GPU video reader as DALI's sequence_processing/video/video_label_example.py uses it:
a Pipeline subclass whose define_graph returns the reader's outputs as one list.

Verified on the GPU only (device=gpu): the legacy reader has no CPU variant; it reads the H.264
fixture clips (fixtures/make_fixtures.py, video_h264)."""
import os

import numpy as np
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd

BATCH_SIZE = 4
COUNT = 5
VIDEO_FILE_ROOT = os.path.join(os.environ["DALI_EXTRA_PATH"], "db", "video", "sintel", "labelled_videos")


def VideoPipe(batch_size, num_threads, device_id, data, *, seed=12):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    with ctx:
        reader = ndd.readers.Video(device="gpu", file_root=data, sequence_length=COUNT, shard_id=0, num_shards=1, random_shuffle=False, normalized=True, image_type=types.YCbCr, dtype=types.FLOAT)
    while True:
        for output in reader.next_epoch(batch_size=batch_size, ctx=ctx):
            with ctx:
                outputs_2 = output
            yield outputs_2


def FileListVideoPipe(batch_size, num_threads, device_id, file_list, *, seed=12):
    """file_list with frame numbers and timestamps: video, label, frame number, timestamps."""
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    with ctx:
        reader = ndd.readers.Video(device="gpu", file_list=file_list, sequence_length=COUNT, enable_frame_num=True, enable_timestamps=True)
    while True:
        for outputs in reader.next_epoch(batch_size=batch_size, ctx=ctx):
            with ctx:
                outputs_2 = outputs
            yield outputs_2


if __name__ == "__main__":
    pipe = VideoPipe(batch_size=BATCH_SIZE, num_threads=2, device_id=0, data=VIDEO_FILE_ROOT)
    for i in range(10):
        sequences_out, label = next(pipe)
        sequences = np.array(ndd.as_tensor(sequences_out.cpu()))
        print("sequences shape:", sequences.shape, "labels:", np.array(ndd.as_tensor(label.cpu())).ravel())
    listed = FileListVideoPipe(batch_size=2, num_threads=2, device_id=0, file_list="file_list.txt")
    frames, labels, frame_num, timestamps = next(listed)
    print(np.array(ndd.as_tensor(frame_num.cpu())).ravel(), np.array(ndd.as_tensor(timestamps.cpu()))[0])
