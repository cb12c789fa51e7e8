# golden-verify: pipe=asr_features args=(str(DATA / "audio"), False) kwargs=dict(batch_size=2) iterations=3
# golden-verify: pipe=asr_features args=(str(DATA / "audio"), True) kwargs=dict(batch_size=2, device_id=0) device=gpu iterations=3
"""QuartzNet's preprocessing as NVIDIA's speech recipes write it: the audio moves to the GPU only
when asked, and the dither noise follows it wherever it is."""
from nvidia.dali import fn, pipeline_def, types


@pipeline_def(num_threads=2, seed=5)
def asr_features(root, on_gpu, dither_coeff=0.01):
    encoded, label = fn.readers.file(file_root=root, name="file_reader")
    audio, _ = fn.decoders.audio(encoded, dtype=types.FLOAT, downmix=True)
    if on_gpu:
        audio = audio.gpu()
    audio = audio + fn.random.normal(audio) * dither_coeff
    audio = fn.preemphasis_filter(audio, preemph_coeff=0.97)
    keep = fn.random.uniform(range=(0.0, 1.0))
    if on_gpu:
        keep = keep.gpu()
    masked = audio.gpu() * keep  # on the GPU either way: keep goes there too
    return audio, masked, label
