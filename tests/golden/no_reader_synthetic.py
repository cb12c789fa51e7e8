# golden-verify: pipe=synthetic_pipe iterations=3
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import pipeline_def


@pipeline_def(batch_size=16, num_threads=2, device_id=0, seed=0)
def synthetic_pipe(height=32, width=32):
    """Random images for benchmarking: no reader."""
    images = fn.random.normal(shape=(height, width, 3), dtype=types.FLOAT)
    labels = fn.random.uniform(range=(0, 10), dtype=types.INT32, shape=(1,))
    return images.gpu(), labels.gpu()


pipe = synthetic_pipe(height=64, width=64)
pipe.build()
for step in range(100):
    images, labels = pipe.run()
