# golden-verify: pipe=COCOPipeline kwargs={"batch_size": 3, "num_threads": 2, "device_id": 0, "data_dir": str(DATA / "images")} iterations=5
# golden-verify: pipe=AudioLengths kwargs={"batch_size": 3, "num_threads": 2, "device_id": 0, "data_dir": str(DATA / "audio"), "device": "cpu"} iterations=4
"""fn.shapes with device= written, as real pipelines write it: ops.Shapes(device="gpu") of the
decoded, resized GPU images (XiaotaoChen's dali-usage COCO pipeline) and ops.Shapes(device=self.device)
of features made on that device (MLPerf's RNN-T inference pipeline). The operator runs where
device= says, with its input there."""
import secrets
import numpy as np
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


def COCOPipeline(batch_size, num_threads, device_id, data_dir, *, seed=15):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    reader = ndd.readers.File(file_root=data_dir, random_shuffle=True, seed=seed_or_random)
    while True:
        for inputs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(inputs, device="gpu", output_type=types.RGB)
                images = ndd.resize(images, device="gpu", resize_shorter=20)
                resized_shape = ndd.as_batch(images.shape, dtype=ndd.int64, device="gpu")
                outputs = images, labels, resized_shape
            yield outputs


def AudioLengths(batch_size, num_threads, device_id, data_dir, device="gpu", *, seed=3):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=data_dir)
    while True:
        for audio, label in reader.next_epoch(batch_size=batch_size):
            with ctx:
                audio, rate = ndd.decoders.audio(audio, dtype=types.FLOAT, downmix=True)
                if device == "gpu":
                    audio = audio.gpu()
                features = ndd.spectrogram(audio, device=device, nfft=64, window_length=64, window_step=32)
                outputs = features, ndd.as_batch(features.shape, dtype=types.INT32, device=device), label
            yield outputs


if __name__ == "__main__":
    pipe = COCOPipeline(batch_size=4, num_threads=2, device_id=0, data_dir="data/images")
    images, labels, shapes = next(pipe)
    print(np.array(shapes.cpu().select(0)))
