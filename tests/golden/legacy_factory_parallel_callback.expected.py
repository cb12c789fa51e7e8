# golden-verify: pipe=create_pipeline args=(24, 4, 0) iterations=8
"""swinunetr-style loader: a factory decorated for parallel workers makes each per-sample callback."""
import numpy as np
import itertools
import nvidia.dali.pickling as dali_pickle
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


@dali_pickle.pickle_by_value
def create_callback(n_items, batch_size, shard_id=0, num_shards=1):
    table = np.arange(n_items, dtype=np.float32) * 0.5

    def callback(sample_info):
        i = (sample_info.idx_in_epoch * num_shards + shard_id) % n_items
        return np.full((4, 4), table[i], dtype=np.float32), np.array([i], dtype=np.int64)

    return callback


def create_pipeline(n_items, batch_size, device_id, shard_id=0, num_shards=1, seed=42):
    def pipe_batches(*, batch_size=batch_size, num_threads=2, device_id=device_id, seed=None):
        ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
        source_2 = create_callback(n_items, batch_size, shard_id, num_shards)

        # the code above runs when the pipeline is made, as in pipeline mode
        def batches():
            for source_data in map(lambda i: [source_2(types.SampleInfo(i * batch_size + j, j, i, 0)) for j in range(batch_size)], itertools.count()):
                with ctx:
                    x, y = ndd.batch([sample[0] for sample in source_data]), ndd.batch([sample[1] for sample in source_data])
                    x = ndd.cast(x, dtype=types.FLOAT16)
                    outputs = x.gpu(), y.gpu()
                yield outputs

        return batches()

    pipe = pipe_batches()
    return pipe
