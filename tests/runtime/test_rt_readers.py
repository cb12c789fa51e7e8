"""Readers: next_epoch batching/wrapping, sample mode, fixed batch size, metadata, sharding."""

import numpy as np
import pytest

pytest.importorskip("nvidia.dali")

from nvidia.dali import fn, pipeline_def  # noqa: E402

import dali_migrate.runtime as ndd  # noqa: E402


def _labels(batch):
    return [int(np.asarray(t).item()) for t in batch]


def test_epochs_back_to_back_equal_pipe_run(image_dir):
    bs = 4

    @pipeline_def(batch_size=bs, num_threads=1, device_id=None, seed=3)
    def p():
        jpegs, labels = fn.readers.file(file_root=image_dir, random_shuffle=True, seed=17,
                                        initial_fill=8)
        return jpegs, labels

    pipe = p()
    pipe.build()
    reader = ndd.readers.File(file_root=image_dir, random_shuffle=True, seed=17, initial_fill=8)
    got = []
    for _ in range(3):
        epoch = list(reader.next_epoch(batch_size=bs))
        assert len(epoch) == -(-21 // bs)  # ceil(N / bs)
        got += epoch
    for jl in got:
        ref = pipe.run()
        assert _labels(jl[1]) == _labels(ref[1])
        for a, b in zip(jl[0], ref[0]):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_fixed_batch_size_and_api_mixing(image_dir):
    reader = ndd.readers.File(file_root=image_dir)
    next(reader.next_epoch(batch_size=4))
    with pytest.raises(ValueError, match="is different than the `max_batch_size` 4"):
        reader.next_epoch(batch_size=3)
    with pytest.raises(RuntimeError, match="Cannot mix"):
        reader.next_epoch()


def test_sample_mode_and_metadata(image_dir):
    reader = ndd.readers.File(file_root=image_dir)
    meta = reader.get_metadata()
    assert meta["epoch_size"] == 21 and meta["number_of_shards"] == 1
    samples = list(reader.next_epoch())
    assert len(samples) == 21
    assert all(isinstance(x, ndd.Tensor) for s in samples for x in s)
    assert sorted(int(np.asarray(s[1]).item()) for s in samples) == [0] * 7 + [1] * 7 + [2] * 7


def test_sharding(image_dir):
    r = ndd.readers.File(file_root=image_dir, shard_id=1, num_shards=2, stick_to_shard=True)
    n = sum(b[0].batch_size for b in r.next_epoch(batch_size=2))
    assert n in (10, 11, 12)
    with pytest.raises(ValueError, match="shard_id=2 is invalid"):
        ndd.readers.File(file_root=image_dir, shard_id=2, num_shards=2)
