# golden-verify: pipe=SimplePipeline kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "seed": 12, "data_dir": str(DATA / "images")} iterations=5
"""Every pipeline setting is a parameter of __init__, passed on positionally (DALI's
serialization example)."""
import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline


class SimplePipeline(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, seed, data_dir):
        super(SimplePipeline, self).__init__(batch_size, num_threads, device_id, seed=seed)
        self.input = ops.readers.File(file_root=data_dir)
        self.decode = ops.decoders.Image(device="cpu", output_type=types.RGB)

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        return self.decode(jpegs), labels


pipe = SimplePipeline(batch_size=16, num_threads=2, device_id=0, seed=12, data_dir="/data")
pipe.build()
out = pipe.run()
