# golden-run: pipe=VideoPipe kwargs={"batch_size": 2, "num_threads": 2, "device_id": None, "data": str(DATA / "video")} iterations=6
import numpy as np
from nvidia.dali.pipeline import Pipeline
import nvidia.dali.ops as ops
import nvidia.dali.types as types

BATCH_SIZE = 2
COUNT = 3


class VideoPipe(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data):
        super(VideoPipe, self).__init__(batch_size, num_threads, device_id, seed=12)
        # file_root: one label per class folder; enable_frame_num: the first frame's index
        self.input = ops.experimental.readers.Video(device="cpu", file_root=data, sequence_length=COUNT,
                                                    shard_id=0, num_shards=1, random_shuffle=False,
                                                    enable_frame_num=True)

    def define_graph(self):
        output = self.input(name="Reader")
        return output


if __name__ == "__main__":
    pipe = VideoPipe(batch_size=BATCH_SIZE, num_threads=2, device_id=0, data="data/videos")
    pipe.build()
    for i in range(10):
        sequences_out, label, frame_num = pipe.run()
        sequences = sequences_out.as_cpu().as_array()
        labels = label.as_cpu().as_array()
        print("sequences shape:", sequences.shape, "labels:", labels.ravel(), "first frames:", frame_num.as_cpu().as_array().ravel())
