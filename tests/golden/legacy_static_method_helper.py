# golden-run: pipe=AudioFeaturesPipeline kwargs={"file_root": str(DATA / "audio"), "batch_size": 2, "num_threads": 1, "device_id": None} iterations=5
"""Frame splicing in methods of a Pipeline subclass, one of them a @staticmethod called on self,
as DALI's RNN-T example writes it."""
import nvidia.dali
import nvidia.dali.ops as ops
import nvidia.dali.types as types


class AudioFeaturesPipeline(nvidia.dali.pipeline.Pipeline):
    def __init__(self, file_root, batch_size, num_threads, device_id, frame_splicing_factor=3):
        super(AudioFeaturesPipeline, self).__init__(batch_size, num_threads, device_id, seed=42)
        self.frame_splicing_factor = frame_splicing_factor
        self.read = ops.readers.File(file_root=file_root, device="cpu")
        self.decode = ops.decoders.Audio(device="cpu", dtype=types.FLOAT, downmix=True)
        self.spectrogram = ops.Spectrogram(device="cpu", nfft=512, window_length=320, window_step=160)
        self.get_shape = ops.Shapes(device="cpu")
        self.splicing_transpose = ops.Transpose(device="cpu", perm=[1, 0])
        self.splicing_reshape = ops.Reshape(device="cpu", rel_shape=[-1, frame_splicing_factor])
        self.splicing_pad = ops.Pad(axes=[0], fill_value=0, align=frame_splicing_factor, device="cpu")

    @staticmethod
    def _div_ceil(dividend, divisor):
        return (dividend + divisor - 1) // divisor

    def _splice_frames(self, input):
        out = self.splicing_transpose(input)

        # Because of the padding, we need to determine length of audio sample before it occurs
        audio_len = self._div_ceil(self.get_shape(out), self.frame_splicing_factor)

        out = self.splicing_pad(out)
        out = self.splicing_reshape(out)
        return out, audio_len

    def define_graph(self):
        input, label = self.read()
        audio, sr = self.decode(input)
        audio = self.spectrogram(audio)
        audio, audio_sh = self._splice_frames(audio)
        return audio.gpu(), label.gpu(), audio_sh.gpu()


def test_dali(root):
    pipe = AudioFeaturesPipeline(root, batch_size=2, num_threads=1, device_id=0)
    pipe.build()
    audio, label, audio_sh = pipe.run()
    return audio_sh.as_cpu().at(0)
