# golden-verify: pipe=TrainPipeline kwargs={"batch_size": 2, "num_threads": 2, "device_id": None, "imgs": [str(DATA / "numpy_pairs" / f"data-{k:02d}.npy") for k in range(6)], "lbls": [str(DATA / "numpy_pairs" / f"label-{k:02d}.npy") for k in range(6)], "seed": 12} iterations=10
# golden-run: pipe=EvalPipeline kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "imgs": [str(DATA / "numpy_pairs" / f"data-{k:02d}.npy") for k in range(6)], "lbls": [str(DATA / "numpy_pairs" / f"label-{k:02d}.npy") for k in range(6)], "seed": 12} iterations=7
"""Segmentation data as NVIDIA's nnU-Net loads it: images and labels are .npy files, each read by an
ops.readers.Numpy of the same settings that a Pipeline subclass makes in __init__."""
import nvidia.dali.fn as fn
import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline


def random_augmentation(probability, augmented, original):
    condition = fn.cast(fn.random.coin_flip(probability=probability), dtype=types.DALIDataType.BOOL)
    neg_condition = condition ^ True
    return condition * augmented + neg_condition * original


class GenericPipeline(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, imgs, lbls, seed, gpus=1, shuffle=False):
        super().__init__(batch_size, num_threads, device_id, seed=seed)
        self.reader_seed = seed
        self.gpus = gpus
        self.shuffle = shuffle
        self.device = device_id
        self.input_x = self.get_reader(imgs)
        self.input_y = self.get_reader(lbls)

    def get_reader(self, data):
        return ops.readers.Numpy(
            files=data,
            device="cpu",
            read_ahead=True,
            dont_use_mmap=True,
            pad_last_batch=True,
            shard_id=self.device or 0,
            seed=self.reader_seed,
            num_shards=self.gpus,
            shuffle_after_epoch=self.shuffle,
        )

    def load_data(self):
        img = self.input_x(name="ReaderX")
        img = fn.reshape(img, layout="HWC")
        lbl = self.input_y(name="ReaderY")
        lbl = fn.reshape(lbl, layout="HW")
        return img, lbl


class TrainPipeline(GenericPipeline):
    def __init__(self, batch_size, num_threads, device_id, imgs, lbls, seed, gpus=1):
        super().__init__(batch_size, num_threads, device_id, imgs, lbls, seed, gpus=gpus, shuffle=True)

    def brightness_fn(self, img):
        brightness_scale = random_augmentation(0.15, fn.random.uniform(range=(0.7, 1.3)), 1.0)
        return img * brightness_scale

    def define_graph(self):
        img, lbl = self.load_data()
        img = self.brightness_fn(img)
        return img, lbl


class EvalPipeline(GenericPipeline):
    def __init__(self, batch_size, num_threads, device_id, imgs, lbls, seed, gpus=1):
        super().__init__(batch_size, num_threads, device_id, imgs, lbls, seed, gpus=gpus)

    def define_graph(self):
        img, lbl = self.load_data()
        return img, lbl
