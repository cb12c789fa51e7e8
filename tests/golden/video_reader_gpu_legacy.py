# golden-verify: pipe=VideoPipe kwargs={"batch_size": 2, "num_threads": 2, "device_id": 0, "data": str(DATA / "video_h264")} iterations=8 device=gpu
# golden-verify: pipe=FileListVideoPipe kwargs={"batch_size": 2, "num_threads": 2, "device_id": 0, "file_list": str(DATA / "video_h264_list.txt")} iterations=8 needs=("video_h264",) device=gpu
"""The legacy GPU video reader as DALI's sequence_processing/video/video_label_example.py uses it:
a Pipeline subclass whose define_graph returns the reader's outputs as one list.

Verified on the GPU only (device=gpu): the legacy reader has no CPU variant; it reads the H.264
fixture clips (fixtures/make_fixtures.py, video_h264)."""
import os

import numpy as np
import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline

BATCH_SIZE = 4
COUNT = 5
VIDEO_FILE_ROOT = os.path.join(os.environ["DALI_EXTRA_PATH"], "db", "video", "sintel", "labelled_videos")


class VideoPipe(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data):
        super(VideoPipe, self).__init__(batch_size, num_threads, device_id, seed=12)
        self.input = ops.readers.Video(device="gpu", file_root=data, sequence_length=COUNT,
                                       shard_id=0, num_shards=1, random_shuffle=False,
                                       normalized=True, image_type=types.YCbCr, dtype=types.FLOAT)

    def define_graph(self):
        output = self.input(name="Reader")
        return output


class FileListVideoPipe(Pipeline):
    """file_list with frame numbers and timestamps: video, label, frame number, timestamps."""

    def __init__(self, batch_size, num_threads, device_id, file_list):
        super().__init__(batch_size, num_threads, device_id, seed=12)
        self.input = ops.readers.Video(device="gpu", file_list=file_list, sequence_length=COUNT,
                                       enable_frame_num=True, enable_timestamps=True)

    def define_graph(self):
        outputs = self.input(name="Reader")
        return outputs


if __name__ == "__main__":
    pipe = VideoPipe(batch_size=BATCH_SIZE, num_threads=2, device_id=0, data=VIDEO_FILE_ROOT)
    pipe.build()
    for i in range(10):
        sequences_out, label = pipe.run()
        sequences = np.array(sequences_out.as_cpu().as_tensor())
        print("sequences shape:", sequences.shape, "labels:", label.as_cpu().as_array().ravel())
    listed = FileListVideoPipe(batch_size=2, num_threads=2, device_id=0, file_list="file_list.txt")
    listed.build()
    frames, labels, frame_num, timestamps = listed.run()
    print(frame_num.as_cpu().as_array().ravel(), timestamps.as_cpu().as_array()[0])
