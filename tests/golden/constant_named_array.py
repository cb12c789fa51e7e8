# golden-run: pipe=join_pipe kwargs={"batch_size": 2} iterations=3
"""Joining constant tensors made from numpy arrays kept in module-level variables (after DALI's
tensor_join example)."""
import numpy as np
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import pipeline_def

GRID = np.array(
    [
        [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]],
        [[13, 14, 15, 16], [17, 18, 19, 20], [21, 22, 23, 24]],
    ]
)
WEIGHTS = np.array([0.1, 0.2, 0.7])


@pipeline_def(num_threads=3, device_id=0)
def join_pipe():
    src1 = types.Constant(GRID)
    src2 = types.Constant(GRID + 100)
    src3 = types.Constant(200 + GRID * 2)
    weights = types.Constant(WEIGHTS)
    scaled = types.Constant(WEIGHTS * 2.5 - 1)
    return (
        fn.cat(src1, src2, src3, axis=1),
        fn.stack(src1, src2, src3, axis=3),
        weights,
        fn.cat(weights, scaled),
    )


if __name__ == "__main__":
    pipe = join_pipe(batch_size=1)
    pipe.build()
    for out in pipe.run():
        print(out.at(0).dtype, out.at(0).shape)
        print(out.at(0))
