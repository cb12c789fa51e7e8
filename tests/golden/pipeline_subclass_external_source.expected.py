import numpy as np
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


def FeedPipe(batch_size, num_threads, device_id, *, seed=None):
    """Fed from Python every iteration."""
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    while True:
        try:
            images_data = [np.zeros((4, 4, 3), dtype=np.uint8)] * batch_size
        except StopIteration:
            return
        with ctx:
            images = ndd.batch(images_data)
            outputs = (ndd.flip(images, horizontal=1),)
        yield outputs


pipe = FeedPipe(batch_size=2, num_threads=1, device_id=0)
(out,) = next(pipe)
