"""Climate segmentation data as DeepCAM's loader reads it: each sample's data and label are .npy
files, read by two numpy readers of the same settings in a pipeline built by hand in a method of
the loader, handed to DALI's PyTorch iterator, which counts its epochs by the data reader.
(tests/test_several_readers.py runs this loader in both modes and compares its epochs.)"""
import glob
import os

import numpy as np
import nvidia.dali.fn as fn
import nvidia.dali.types as types
import torch
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy


class CamDaliNumpyDataloader(object):

    def get_pipeline(self, data_files, label_files, num_shards, shard_id):
        pipeline = Pipeline(batch_size=self.batchsize,
                            num_threads=self.num_threads,
                            device_id=self.device.index,
                            seed=self.seed)

        with pipeline:
            data = fn.readers.numpy(name="data",
                                    device="cpu",
                                    file_root=self.root_dir,
                                    files=data_files,
                                    num_shards=num_shards,
                                    shard_id=shard_id,
                                    stick_to_shard=self.stick_to_shard,
                                    shuffle_after_epoch=self.shuffle,
                                    prefetch_queue_depth=2,
                                    pad_last_batch=True,
                                    dont_use_mmap=not self.use_mmap,
                                    seed=self.seed).gpu()

            label = fn.readers.numpy(name="label",
                                     device="cpu",
                                     file_root=self.root_dir,
                                     files=label_files,
                                     num_shards=num_shards,
                                     shard_id=shard_id,
                                     stick_to_shard=self.stick_to_shard,
                                     shuffle_after_epoch=self.shuffle,
                                     prefetch_queue_depth=2,
                                     pad_last_batch=True,
                                     dont_use_mmap=not self.use_mmap,
                                     seed=self.seed).gpu()

            # normalize data
            data = fn.normalize(data,
                                device="gpu",
                                mean=self.data_mean,
                                stddev=self.data_stddev,
                                scale=1.)

            # cast label to long
            label = fn.cast(label,
                            device="gpu",
                            dtype=types.DALIDataType.INT64)

            # channels first
            data = fn.transpose(data,
                                device="gpu",
                                perm=[2, 0, 1])

            pipeline.set_outputs(data, label)

        return pipeline

    def __init__(self, root_dir, prefix_data, prefix_label, batchsize,
                 num_threads=1, device=torch.device("cpu"),
                 num_shards=1, shard_id=0, shuffle=False, is_validation=False,
                 use_mmap=True, seed=333):
        self.root_dir = root_dir
        self.batchsize = batchsize
        self.num_threads = num_threads
        self.device = device
        self.use_mmap = use_mmap
        self.shuffle = shuffle
        self.stick_to_shard = not shuffle
        self.is_validation = is_validation
        self.seed = seed

        # per-channel statistics, reshaped to broadcast over channels-last samples
        data_min = np.array([-3.0, -2.9, -2.8])
        data_max = np.array([9.0, 9.1, 9.2])
        self.data_mean = np.reshape(data_min, (1, 1, data_min.shape[0])).astype(np.float32)
        self.data_stddev = np.reshape(data_max - data_min, (1, 1, data_min.shape[0])).astype(np.float32)

        # the readers take the file names relative to the data folder
        self.data_files = sorted(glob.glob(os.path.join(root_dir, prefix_data)))
        self.label_files = sorted(glob.glob(os.path.join(root_dir, prefix_label)))
        data_files = [os.path.relpath(x, root_dir) for x in self.data_files]
        label_files = [os.path.relpath(x, root_dir) for x in self.label_files]

        pipeline = self.get_pipeline(data_files, label_files, num_shards, shard_id)
        pipeline.build()
        self.global_size = len(self.data_files)

        self.iterator = DALIGenericIterator([pipeline], ['data', 'label'], auto_reset=True,
                                            reader_name="data",
                                            last_batch_policy=LastBatchPolicy.DROP,
                                            prepare_first_batch=False)

        self.epoch_size = pipeline.epoch_size()

    def __iter__(self):
        for token in self.iterator:
            data = token[0]['data']
            label = token[0]['label']

            yield data, label, ""
