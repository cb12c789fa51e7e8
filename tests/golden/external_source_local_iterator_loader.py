"""A data loader function that defines its synthetic-data iterator class in its body, builds the
pipeline with `with pipe:` and returns DALIGenericIterator over it, as DALI's ResNet-50 examples
do; the training loop is in another module and may run any number of epochs."""
import numpy as np
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin.pytorch import DALIGenericIterator


def dali_synthetic_dataloader(args, device_id):
    batch_size = args.batch_size
    image_shape = args.image_shape
    output_dtype = types.FLOAT16 if args.fp16 else types.FLOAT
    num_threads = args.num_threads

    class ExternalInputIterator(object):
        def __init__(self, batch_size, image_shape):
            self.synthetic_data = np.arange(batch_size * np.prod(image_shape), dtype=np.float32).reshape(
                (batch_size, *image_shape))
            self.n = args.benchmark_steps

        def __iter__(self):
            self.i = 0
            return self

        def __next__(self):
            if self.i >= self.n:
                self.__iter__()
                raise StopIteration()
            self.i += 1
            return list(self.synthetic_data + self.i)

    eli = ExternalInputIterator(batch_size, image_shape)
    pipe = Pipeline(batch_size=batch_size, num_threads=num_threads, device_id=device_id)
    with pipe:
        images = fn.external_source(source=eli, dtype=output_dtype)
        images = images.gpu()
        pipe.set_outputs(images)
    pipe.build()
    return DALIGenericIterator([pipe], ["data"])
