# golden-verify: pipe=VideoReaderPipeline kwargs={"batch_size": 2, "sequence_length": 5, "num_threads": 2, "device_id": 0, "files": sorted(str(p) for p in (DATA / "video_h264").glob("*/*.mp4")), "crop_size": (64, 96)} iterations=8 needs=("video_h264",) device=gpu
"""After the loader of DALI's video super-resolution example
(use_cases/video_superres/dataloading/dataloaders.py): ops.VideoReader on the GPU in a Pipeline
subclass, random crops, frames moved to CFHW."""
import os

import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin import pytorch


class VideoReaderPipeline(Pipeline):
    def __init__(self, batch_size, sequence_length, num_threads, device_id, files, crop_size):
        super(VideoReaderPipeline, self).__init__(batch_size, num_threads, device_id, seed=12)
        self.reader = ops.VideoReader(device="gpu", filenames=files, sequence_length=sequence_length,
                                      normalized=False, random_shuffle=True, image_type=types.RGB,
                                      dtype=types.UINT8, initial_fill=16)
        self.crop = ops.Crop(device="gpu", crop=crop_size, dtype=types.FLOAT)
        self.uniform = ops.Uniform(range=(0.0, 1.0))
        self.transpose = ops.Transpose(device="gpu", perm=[3, 0, 1, 2])

    def define_graph(self):
        input = self.reader(name="Reader")
        cropped = self.crop(input, crop_pos_x=self.uniform(), crop_pos_y=self.uniform())
        output = self.transpose(cropped)
        return output


class DALILoader:
    def __init__(self, batch_size, file_root, sequence_length, crop_size):
        container_files = os.listdir(file_root)
        container_files = [file_root + "/" + f for f in container_files]
        self.pipeline = VideoReaderPipeline(batch_size=batch_size, sequence_length=sequence_length,
                                            num_threads=2, device_id=0, files=container_files,
                                            crop_size=crop_size)
        self.pipeline.build()
        self.epoch_size = self.pipeline.epoch_size("Reader")
        self.dali_iterator = pytorch.DALIGenericIterator(self.pipeline, ["data"], self.epoch_size,
                                                         auto_reset=True)

    def __len__(self):
        return int(self.epoch_size)

    def __iter__(self):
        return self.dali_iterator.__iter__()
