# golden-verify: pipe=HybridTrainPipe kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "data_dir": str(DATA / "images")} iterations=4
"""A loader module as training repositories split it: the pipelines here, the script that puts them
into the loaders below in another file (w_SNN's DALIDataloader, DeepLearningExamples' SSD iterator)."""
import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin.pytorch import DALIGenericIterator


class DALIDataloader(DALIGenericIterator):
    def __init__(self, pipeline, output_map=("data", "label")):
        self.size_1 = pipeline.epoch_size("Reader")
        self.batch_size = pipeline.max_batch_size
        super().__init__(pipeline, list(output_map), reader_name="Reader")

    def __len__(self):
        return -(-self.size_1 // self.batch_size)


class PairIterator(object):
    def __init__(self, pipelines):
        self.batch_size = pipelines[0].max_batch_size
        self._pipes = pipelines
        for p in self._pipes:
            p.build()

    def __next__(self):
        outputs = [p.share_outputs() for p in self._pipes]
        for p in self._pipes:
            p.release_outputs()
            p.schedule_run()
        return outputs


class HybridTrainPipe(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data_dir, crop=16):
        super().__init__(batch_size, num_threads, device_id, seed=12)
        self.input = ops.readers.File(file_root=data_dir, random_shuffle=True, name="Reader")
        self.decode = ops.decoders.Image(device="cpu", output_type=types.RGB)
        self.res = ops.RandomResizedCrop(size=(crop, crop))
        self.coin = ops.random.CoinFlip(probability=0.5)
        self.cmnp = ops.CropMirrorNormalize(dtype=types.FLOAT, output_layout="CHW",
                                            mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                            std=[0.229 * 255, 0.224 * 255, 0.225 * 255])

    def define_graph(self):
        jpegs, labels = self.input()
        images = self.decode(jpegs)
        images = self.res(images)
        output = self.cmnp(images, mirror=self.coin())
        return output, labels
