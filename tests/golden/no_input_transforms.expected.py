# golden-run: pipe=transforms_pipe kwargs={"batch_size": 3} iterations=4
import nvidia.dali.experimental.dynamic as ndd


def transforms_pipe(*, batch_size, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    while True:
        with ctx:
            rotation = ndd.transforms.rotation(angle=30.0, center=(0.5, 0.5), batch_size=batch_size)
            translation = ndd.transforms.translation(offset=(2.0, 3.0), batch_size=batch_size)
            combined = ndd.transforms.combine(rotation, translation)
            outputs = rotation, combined
        yield outputs


def grid_pipe(*, batch_size, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    while True:
        with ctx:
            rotation = ndd.transforms.rotation(angle=45.0, batch_size=batch_size)
            scale = ndd.transforms.scale(scale=(2.0, 2.0), batch_size=batch_size)
            outputs = (ndd.transforms.combine(rotation, scale),)
        yield outputs
