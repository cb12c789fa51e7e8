# golden-run: pipe=VideoPipe kwargs={"batch_size": 2, "num_threads": 2, "device_id": None, "data": str(DATA / "video")} iterations=6
import numpy as np
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd

BATCH_SIZE = 2
COUNT = 3


def VideoPipe(batch_size, num_threads, device_id, data, *, seed=12):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    # file_root: one label per class folder; enable_frame_num: the first frame's index
    reader = ndd.experimental.readers.Video(device="cpu", file_root=data, sequence_length=COUNT, shard_id=0, num_shards=1, random_shuffle=False, enable_frame_num=True)
    while True:
        for output in reader.next_epoch(batch_size=batch_size):
            with ctx:
                outputs = output
            yield outputs


if __name__ == "__main__":
    pipe = VideoPipe(batch_size=BATCH_SIZE, num_threads=2, device_id=0, data="data/videos")
    for i in range(10):
        sequences_out, label, frame_num = next(pipe)
        sequences = np.array(ndd.as_tensor(sequences_out.cpu()))
        labels = np.array(ndd.as_tensor(label.cpu()))
        print("sequences shape:", sequences.shape, "labels:", labels.ravel(), "first frames:", np.array(ndd.as_tensor(frame_num.cpu())).ravel())
