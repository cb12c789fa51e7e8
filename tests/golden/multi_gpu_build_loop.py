# golden-verify: pipe=caffe_pipeline args=(str(DATA / "caffe_lmdb"), 2) kwargs=dict(batch_size=4) iterations=6
# golden-verify: pipe=caffe_pipeline args=(str(DATA / "caffe_lmdb"), 2) kwargs=dict(batch_size=4, device_id=0) device=gpu iterations=6
"""DALI's multi-GPU LMDB example as projects copy it: the shard is the pipeline's own device, read
with Pipeline.current(), every pipeline is built by a loop, and one iterator takes them all."""
import os.path

import numpy as np
from nvidia.dali import Pipeline, pipeline_def
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali.plugin.pytorch import DALIGenericIterator

lmdb_folder = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "data", "caffe_lmdb")

N = 2  # number of GPUs
BATCH_SIZE = 4  # batch size per GPU


@pipeline_def
def caffe_pipeline(path, num_gpus):
    # shard by the GPU this pipeline runs on
    device_id = Pipeline.current().device_id
    jpegs, labels = fn.readers.caffe(
        name="Reader", path=path, random_shuffle=True, shard_id=device_id, num_shards=num_gpus)
    images = fn.decoders.image(jpegs, device="mixed")
    images = fn.resize(images, resize_shorter=fn.random.uniform(range=(16, 24)), interp_type=types.INTERP_LINEAR)
    images = fn.crop_mirror_normalize(
        images,
        crop_pos_x=fn.random.uniform(range=(0.0, 1.0)),
        crop_pos_y=fn.random.uniform(range=(0.0, 1.0)),
        dtype=types.FLOAT,
        crop=(12, 12),
        mean=[128.0, 128.0, 128.0],
        std=[1.0, 1.0, 1.0],
    )
    return images, labels


label_range = (0, 999)
pipes = [caffe_pipeline(lmdb_folder, batch_size=BATCH_SIZE, num_threads=2, device_id=device_id, num_gpus=N) for device_id in range(N)]

for pipe in pipes:
    pipe.build()

dali_iter = DALIGenericIterator(pipes, ["data", "label"], reader_name="Reader")

for i, data in enumerate(dali_iter):
    for d in data:
        label = d["label"]
        assert np.equal(np.mod(label, 1), 0).all()
        assert (label >= label_range[0]).all() and (label <= label_range[1]).all()
