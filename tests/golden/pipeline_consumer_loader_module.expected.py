# golden-verify: pipe=HybridTrainPipe kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "data_dir": str(DATA / "images")} iterations=4
"""A loader module as training repositories split it: the pipelines here, the script that puts them
into the loaders below in another file (w_SNN's DALIDataloader, DeepLearningExamples' SSD iterator)."""
import secrets
import nvidia.dali.types as types
from nvidia.dali.plugin.pytorch import DALIGenericIterator
import nvidia.dali.experimental.dynamic as ndd


# dali-migrate: [pipeline-consumer] class DALIDataloader (derived from DALI's DALIGenericIterator) takes DALI pipeline objects and nothing in this file makes or calls it; this file's pipelines (HybridTrainPipe) are converted to dynamic mode and are no longer pipeline objects: code elsewhere that gives it one of them must be converted by hand (iterate the converted generator), or keep that pipeline as it is
class DALIDataloader(DALIGenericIterator):
    def __init__(self, pipeline, output_map=("data", "label")):
        self.size_1 = pipeline.epoch_size("Reader")
        self.batch_size = pipeline.max_batch_size
        super().__init__(pipeline, list(output_map), reader_name="Reader")

    def __len__(self):
        return -(-self.size_1 // self.batch_size)


# dali-migrate: [pipeline-consumer] class PairIterator (it reaches pipeline members: .max_batch_size, .share_outputs, .release_outputs, .schedule_run) takes DALI pipeline objects and nothing in this file makes or calls it; this file's pipelines (HybridTrainPipe) are converted to dynamic mode and are no longer pipeline objects: code elsewhere that gives it one of them must be converted by hand (iterate the converted generator), or keep that pipeline as it is
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


def HybridTrainPipe(batch_size, num_threads, device_id, data_dir, crop=16, *, seed=12):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng = ndd.random.RNG(seed=seed_or_random)
    reader = ndd.readers.File(file_root=data_dir, random_shuffle=True, seed=seed_or_random)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, device="cpu", output_type=types.RGB)
                images = ndd.random_resized_crop(images, size=(crop, crop), batch_size=batch_size, rng=rng)
                output = ndd.crop_mirror_normalize(images, mirror=ndd.random.coin_flip(probability=0.5, batch_size=batch_size, rng=rng), dtype=types.FLOAT, output_layout="CHW", mean=[0.485 * 255, 0.456 * 255, 0.406 * 255], std=[0.229 * 255, 0.224 * 255, 0.225 * 255])
                outputs_2 = output, labels
            yield outputs_2
