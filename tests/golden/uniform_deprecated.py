# golden-verify: pipe=params_pipe iterations=3
from nvidia.dali import fn, pipeline_def


@pipeline_def(batch_size=4, num_threads=1, seed=3)
def params_pipe():
    x = fn.uniform(range=[0.0, 1.0], shape=[3])
    y = fn.random.uniform(values=[1, 2, 3])
    return x, y
