import numpy as np
import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline


# dali-migrate: [legacy-pipeline] not converted: the class also defines iter_setup(); only __init__ + define_graph classes are converted (feed_input/iter_setup: not yet), convert by hand
class FeedPipe(Pipeline):
    """Fed from Python every iteration."""

    def __init__(self, batch_size, num_threads, device_id):
        super().__init__(batch_size, num_threads, device_id)
        self.source = ops.ExternalSource()
        self.flip = ops.Flip(horizontal=1)

    def define_graph(self):
        self.images = self.source()
        return self.flip(self.images)

    def iter_setup(self):
        self.feed_input(self.images, [np.zeros((4, 4, 3), dtype=np.uint8)] * self.max_batch_size)


pipe = FeedPipe(batch_size=2, num_threads=1, device_id=0)
pipe.build()
(out,) = pipe.run()
