# golden-verify: pipe=asr_features args=(str(DATA / "audio"), False) kwargs=dict(batch_size=2) iterations=3
# golden-verify: pipe=asr_features args=(str(DATA / "audio"), True) kwargs=dict(batch_size=2, device_id=0) device=gpu iterations=3
"""QuartzNet's preprocessing as NVIDIA's speech recipes write it: the audio moves to the GPU only
when asked, and the dither noise follows it wherever it is."""
import secrets
from nvidia.dali import types
import nvidia.dali.experimental.dynamic as ndd


def asr_features(root, on_gpu, dither_coeff=0.01, *, batch_size, num_threads=2, device_id=None, seed=5):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng = ndd.random.RNG(seed=seed_or_random)
    reader = ndd.readers.File(file_root=root)
    while True:
        for encoded, label in reader.next_epoch(batch_size=batch_size):
            with ctx:
                audio, _ = ndd.decoders.audio(encoded, dtype=types.FLOAT, downmix=True)
                if on_gpu:
                    audio = audio.gpu()
                audio = audio + ndd.random.normal(audio, batch_size=batch_size, rng=rng) * dither_coeff
                audio = ndd.preemphasis_filter(audio, preemph_coeff=0.97)
                keep = ndd.random.uniform(range=(0.0, 1.0), batch_size=batch_size, rng=rng)
                if on_gpu:
                    keep = keep.gpu()
                masked = audio.gpu() * keep.gpu()  # on the GPU either way: keep goes there too
                outputs = audio, masked, label
            yield outputs
