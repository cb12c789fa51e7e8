# golden-run: pipe=AudioTrainPipeline kwargs={"batch_size": 2, "num_threads": 2, "device_id": None, "shard_id": 1, "num_shards": 2, "file_root": str(DATA / "audio")} iterations=6
"""DALI's RNN-T example (use_cases/pytorch/rnn-t/dali.py): a data layer makes one Pipeline subclass
per GPU and hands the list to a class of its own that makes DALIGenericIterator in its __init__
and turns each batch into what the model takes."""
import numpy as np
import nvidia.dali
import nvidia.dali.ops as ops
import nvidia.dali.types as types


class AudioTrainPipeline(nvidia.dali.pipeline.Pipeline):
    def __init__(self, device_id, shard_id, num_shards, file_root, batch_size, sample_rate=16000, nfft=512,
                 window_size=0.02, window_stride=0.01, nfeatures=64, num_threads=1):
        super(AudioTrainPipeline, self).__init__(batch_size, num_threads, device_id, seed=42)
        self.read = ops.FileReader(file_root=file_root, file_filters=["*.wav"], shard_id=shard_id,
                                   num_shards=num_shards)
        self.decode = ops.AudioDecoder(device="cpu", dtype=types.FLOAT, downmix=True)
        self.spectrogram = ops.Spectrogram(device="cpu", nfft=nfft,
                                           window_length=window_size * sample_rate,
                                           window_step=window_stride * sample_rate)
        self.mel_fbank = ops.MelFilterBank(device="cpu", sample_rate=sample_rate, nfilter=nfeatures, normalize=True)
        self.log_features = ops.ToDecibels(device="cpu", multiplier=np.log(10), reference=1.0, cutoff_db=-80)
        self.get_shape = ops.Shapes(device="cpu")
        self.normalize = ops.Normalize(axes=[1], device="cpu")
        self.pad = ops.Pad(axes=[1], fill_value=0, device="cpu")

    def define_graph(self):
        audio, label = self.read()
        audio, sr = self.decode(audio)
        audio = self.spectrogram(audio)
        audio = self.mel_fbank(audio)
        audio = self.log_features(audio)
        audio_sh = self.get_shape(audio)
        audio = self.normalize(audio)
        audio = self.pad(audio)
        return audio.gpu(), label.gpu(), audio_sh.gpu()


class DaliAsrIterator(object):
    """Returns batches for training: audio, audio length, label.

    dali_pipelines: list of DALI pipelines, one per GPU.
    """

    def __init__(self, dali_pipelines, num_samples):
        from nvidia.dali.plugin.pytorch import DALIGenericIterator
        # When modifying the pipeline, update `output_map` here too
        self.dali_it = DALIGenericIterator(dali_pipelines, ["audio", "label", "audio_shape"],
                                           num_samples, dynamic_shape=True)

    def __next__(self):
        data = self.dali_it.__next__()
        return data[0]["audio"], data[0]["audio_shape"][:, 1], data[0]["label"]

    def next(self):
        return self.__next__()

    def __iter__(self):
        return self


class DaliDataLayer:
    def __init__(self, dataset_path, batch_size, ngpus, nfeatures=64):
        self._dali_data_iterator = self._init_iterator(
            dataset_path=dataset_path, batch_size=batch_size, ngpus=ngpus, nfeatures=nfeatures)

    @classmethod
    def _init_iterator(cls, **kwargs):
        cls.dataset_size = 5
        dali_pipelines = [
            AudioTrainPipeline(
                device_id=idx,
                shard_id=idx,
                num_shards=kwargs["ngpus"],
                file_root=kwargs["dataset_path"],
                batch_size=kwargs["batch_size"],
                nfeatures=kwargs["nfeatures"])
            for idx in range(kwargs["ngpus"])
        ]
        return DaliAsrIterator(dali_pipelines, cls.dataset_size)

    def __len__(self):
        return self.dataset_size

    @property
    def data_iterator(self):
        return self._dali_data_iterator
