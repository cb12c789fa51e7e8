# golden-run: pipe=transforms_pipe kwargs={"batch_size": 3} iterations=4
from nvidia.dali import fn, pipeline_def


@pipeline_def(num_threads=1)
def transforms_pipe():
    rotation = fn.transforms.rotation(angle=30.0, center=(0.5, 0.5))
    translation = fn.transforms.translation(offset=(2.0, 3.0))
    combined = fn.transforms.combine(rotation, translation)
    return rotation, combined


@pipeline_def(num_threads=1)
def grid_pipe():
    rotation = fn.transforms.rotation(angle=45.0)
    scale = fn.transforms.scale(scale=(2.0, 2.0))
    return fn.transforms.combine(rotation, scale)
