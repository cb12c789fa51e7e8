# golden-run: pipe=AudioFeaturesPipeline kwargs={"file_root": str(DATA / "audio"), "batch_size": 2, "num_threads": 1, "device_id": None} iterations=5
"""Frame splicing in methods of a Pipeline subclass, one of them a @staticmethod called on self,
as DALI's RNN-T example writes it."""
import numpy as np
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


def AudioFeaturesPipeline(file_root, batch_size, num_threads, device_id, frame_splicing_factor=3, *, seed=42):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=file_root, device="cpu")
    while True:
        for input, label in reader.next_epoch(batch_size=batch_size):
            with ctx:
                audio, sr = ndd.decoders.audio(input, device="cpu", dtype=types.FLOAT, downmix=True)
                audio = ndd.spectrogram(audio, device="cpu", nfft=512, window_length=320, window_step=160)
                out = ndd.transpose(audio, device="cpu", perm=[1, 0])

                # Because of the padding, we need to determine length of audio sample before it occurs
                dividend = ndd.as_batch(out.shape, dtype=ndd.int64, device="cpu")
                audio_len = (dividend + frame_splicing_factor - 1) // frame_splicing_factor

                out = ndd.pad(out, axes=[0], fill_value=0, align=frame_splicing_factor, device="cpu")
                out = ndd.reshape(out, device="cpu", rel_shape=[-1, frame_splicing_factor])
                audio, audio_sh = out, audio_len
                outputs = audio.gpu(), label.gpu(), audio_sh.gpu()
            yield outputs


def test_dali(root):
    pipe = AudioFeaturesPipeline(root, batch_size=2, num_threads=1, device_id=0)
    audio, label, audio_sh = next(pipe)
    return np.array(audio_sh.cpu().select(0))
