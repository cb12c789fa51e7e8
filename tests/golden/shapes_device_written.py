# golden-verify: pipe=COCOPipeline kwargs={"batch_size": 3, "num_threads": 2, "device_id": 0, "data_dir": str(DATA / "images")} iterations=5
# golden-verify: pipe=AudioLengths kwargs={"batch_size": 3, "num_threads": 2, "device_id": 0, "data_dir": str(DATA / "audio"), "device": "cpu"} iterations=4
"""fn.shapes with device= written, as real pipelines write it: ops.Shapes(device="gpu") of the
decoded, resized GPU images (XiaotaoChen's dali-usage COCO pipeline) and ops.Shapes(device=self.device)
of features made on that device (MLPerf's RNN-T inference pipeline). The operator runs where
device= says, with its input there."""
import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline


class COCOPipeline(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data_dir):
        super(COCOPipeline, self).__init__(batch_size, num_threads, device_id, seed=15)
        self.input = ops.readers.File(file_root=data_dir, random_shuffle=True)
        self.decode = ops.ImageDecoder(device="mixed", output_type=types.RGB)
        self.resize = ops.Resize(device="gpu", resize_shorter=20)
        self.shape = ops.Shapes(device="gpu")

    def define_graph(self):
        inputs, labels = self.input()
        images = self.decode(inputs)
        images = self.resize(images)
        resized_shape = self.shape(images)
        return images, labels, resized_shape


class AudioLengths(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data_dir, device="gpu"):
        super().__init__(batch_size, num_threads, device_id, seed=3)
        self.device = device
        self.read = ops.readers.File(file_root=data_dir)
        self.decode = ops.decoders.Audio(dtype=types.FLOAT, downmix=True)
        self.spectrogram = ops.Spectrogram(device=self.device, nfft=64, window_length=64, window_step=32)
        self.get_shape = ops.Shapes(device=self.device, dtype=types.INT32)

    def define_graph(self):
        audio, label = self.read()
        audio, rate = self.decode(audio)
        if self.device == "gpu":
            audio = audio.gpu()
        features = self.spectrogram(audio)
        return features, self.get_shape(features), label


if __name__ == "__main__":
    pipe = COCOPipeline(batch_size=4, num_threads=2, device_id=0, data_dir="data/images")
    pipe.build()
    images, labels, shapes = pipe.run()
    print(shapes.as_cpu().at(0))
