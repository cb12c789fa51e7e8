# golden-verify: pipe=AugmentPipe kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "data_dir": str(DATA / "images"), "brightness_range": [0.5, 1.5], "train": True} iterations=5
# golden-verify: pipe=AugmentPipe kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "data_dir": str(DATA / "images"), "brightness_range": None, "train": True} iterations=5
# golden-run: pipe=ValPipe kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "data_dir": str(DATA / "images"), "crop": 24, "resize_shp": 32} iterations=5
# golden-run: pipe=ValPipe kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "data_dir": str(DATA / "images"), "crop": 24} iterations=5
# golden-run: pipe=CropPipe kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "data_dir": str(DATA / "images"), "unfused": True} iterations=5
# golden-run: pipe=CropPipe kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "data_dir": str(DATA / "images"), "unfused": False} iterations=5
"""Operators that __init__ may leave out, as None: MLPerf's RNN-T pipeline (`if resample_range is
not None: self.speed_perturbation_coeffs = ops.Uniform(...) else: ... = None`, then
`if not self.train or self.speed_perturbation_coeffs is None:` in define_graph) and NVIDIA's
MXNet ResNet-50 loader (`self.resize = ops.Resize(...) if resize_shp else None`, then
`if self.resize:`) and MLPerf's SSD (`self.g_slice = None`, then `if dali_cache > 0 and
use_nvjpeg:` sets it and another decoder; `if self.g_slice is None:` in define_graph)."""
import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin.pytorch import DALIClassificationIterator


class AugmentPipe(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data_dir, brightness_range=None, train=True):
        super().__init__(batch_size, num_threads, device_id, seed=7)
        self.train = train
        self.read = ops.readers.File(file_root=data_dir, random_shuffle=True, name="Reader")
        self.decode = ops.decoders.Image(device="cpu", output_type=types.RGB)
        if brightness_range is not None:
            self.brightness_coeffs = ops.random.Uniform(range=brightness_range)
        else:
            self.brightness_coeffs = None
        self.bc = ops.BrightnessContrast(device="cpu")
        self.resize = ops.Resize(device="cpu", resize_x=32, resize_y=32)

    def define_graph(self):
        jpegs, labels = self.read()
        images = self.resize(self.decode(jpegs))
        if not self.train or self.brightness_coeffs is None:
            images = self.bc(images, contrast=1.0)
        else:
            images = self.bc(images, brightness=self.brightness_coeffs())
        return images, labels


class ValPipe(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data_dir, crop, resize_shp=None):
        super(ValPipe, self).__init__(batch_size, num_threads, device_id, seed=12)
        self.input = ops.readers.File(file_root=data_dir, random_shuffle=False)
        self.decode = ops.decoders.Image(device="cpu", output_type=types.RGB)
        # resize only when asked
        self.resize = ops.Resize(device="cpu", resize_shorter=resize_shp) if resize_shp else None
        self.cmnp = ops.CropMirrorNormalize(device="cpu", dtype=types.FLOAT, crop=(crop, crop))

    def define_graph(self):
        self.jpegs, self.labels = self.input(name="Reader")
        images = self.decode(self.jpegs)
        if self.resize:
            images = self.resize(images)
        output = self.cmnp(images)
        return [output, self.labels]


class CropPipe(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data_dir, unfused=False):
        super().__init__(batch_size, num_threads, device_id, seed=3)
        self.input = ops.readers.File(file_root=data_dir, random_shuffle=False)
        # fused decode and crop
        self.decode = ops.decoders.ImageCrop(device="cpu", crop=(16, 16))
        self.crop = None

        # the caching decoder cannot crop: decode, then crop
        if unfused:
            self.decode = ops.decoders.Image(device="cpu")
            self.crop = ops.Crop(device="cpu", crop=(16, 16))

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        if self.crop is None:
            images = self.decode(jpegs)
        else:
            images = self.crop(self.decode(jpegs))
        return images, labels


def loaders(data_dir, batch_size, brightness_range):
    train = AugmentPipe(batch_size, 2, 0, data_dir + "/train", brightness_range)
    train.build()
    val = ValPipe(batch_size, 2, 0, data_dir + "/val", 224, resize_shp=256)
    val.build()
    return (DALIClassificationIterator(train, reader_name="Reader"),
            DALIClassificationIterator(val, reader_name="Reader"))
