# golden-verify: pipe=create_pipeline args=(24, 4, 0) iterations=8
"""swinunetr-style loader: a factory decorated for parallel workers makes each per-sample callback."""
import numpy as np
import nvidia.dali.fn as fn
import nvidia.dali.pickling as dali_pickle
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline


@dali_pickle.pickle_by_value
def create_callback(n_items, batch_size, shard_id=0, num_shards=1):
    table = np.arange(n_items, dtype=np.float32) * 0.5

    def callback(sample_info):
        i = (sample_info.idx_in_epoch * num_shards + shard_id) % n_items
        return np.full((4, 4), table[i], dtype=np.float32), np.array([i], dtype=np.int64)

    return callback


def create_pipeline(n_items, batch_size, device_id, shard_id=0, num_shards=1, seed=42):
    pipe = Pipeline(batch_size=batch_size, num_threads=2, device_id=device_id, py_start_method="spawn")
    with pipe:
        x, y = fn.external_source(
            source=create_callback(n_items, batch_size, shard_id, num_shards),
            num_outputs=2,
            batch=False,
            parallel=True,
            prefetch_queue_depth=2,
        )
        x = fn.cast(x, dtype=types.FLOAT16)
        pipe.set_outputs(x.gpu(), y.gpu())
    return pipe
