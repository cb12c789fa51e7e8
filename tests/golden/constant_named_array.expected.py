# golden-run: pipe=join_pipe kwargs={"batch_size": 2} iterations=3
"""Joining constant tensors made from numpy arrays kept in module-level variables (after DALI's
tensor_join example)."""
import numpy as np
import nvidia.dali.experimental.dynamic as ndd

GRID = np.array(
    [
        [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]],
        [[13, 14, 15, 16], [17, 18, 19, 20], [21, 22, 23, 24]],
    ]
)
WEIGHTS = np.array([0.1, 0.2, 0.7])


def join_pipe(*, batch_size, num_threads=3, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    while True:
        with ctx:
            src1 = ndd.Batch.broadcast(ndd.tensor([[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]], [[13, 14, 15, 16], [17, 18, 19, 20], [21, 22, 23, 24]]], dtype=ndd.int32), batch_size)
            src2 = ndd.Batch.broadcast(ndd.tensor([[[101, 102, 103, 104], [105, 106, 107, 108], [109, 110, 111, 112]], [[113, 114, 115, 116], [117, 118, 119, 120], [121, 122, 123, 124]]], dtype=ndd.int32), batch_size)
            src3 = ndd.Batch.broadcast(ndd.tensor([[[202, 204, 206, 208], [210, 212, 214, 216], [218, 220, 222, 224]], [[226, 228, 230, 232], [234, 236, 238, 240], [242, 244, 246, 248]]], dtype=ndd.int32), batch_size)
            weights = ndd.Batch.broadcast(ndd.tensor([0.10000000149011612, 0.20000000298023224, 0.699999988079071], dtype=ndd.float32), batch_size)
            scaled = ndd.Batch.broadcast(ndd.tensor([-0.75, -0.5, 0.75], dtype=ndd.float32), batch_size)
            outputs = (
                ndd.cat(src1, src2, src3, axis=1),
                ndd.stack(src1, src2, src3, axis=3),
                weights,
                ndd.cat(weights, scaled),
            )
        yield outputs


if __name__ == "__main__":
    pipe = join_pipe(batch_size=1)
    for out in next(pipe):
        print(np.array(out.select(0)).dtype, np.array(out.select(0)).shape)
        print(np.array(out.select(0)))
