"""imread, ExternalSource (eager) and capture-mode compatibility (eager), as native ndd 2.4."""

import os
import pathlib

import numpy as np
import pytest

pytest.importorskip("nvidia.dali")

from conftest import requires_native_ndd  # noqa: E402

import dali_migrate.runtime as ndd  # noqa: E402


def _files(image_dir):
    return sorted(str(p) for p in pathlib.Path(image_dir).rglob("*.jpg"))


def test_imread_single_and_many(image_dir):
    f = _files(image_dir)
    img = ndd.imread(f[0])
    assert isinstance(img, ndd.Tensor) and img.shape[2] == 3
    ref = ndd.decoders.image(ndd.tensor(np.fromfile(f[0], dtype=np.uint8)))
    np.testing.assert_array_equal(np.asarray(img), np.asarray(ref))
    assert np.array_equal(np.asarray(ndd.imread(pathlib.Path(f[0]))), np.asarray(img))
    imgs = ndd.imread([f[0], pathlib.Path(f[1])])
    assert isinstance(imgs, ndd.Batch) and imgs.batch_size == 2
    np.testing.assert_array_equal(np.asarray(imgs.select(0)), np.asarray(img))
    from nvidia.dali import types

    gray = ndd.imread(f[0], output_type=types.GRAY)  # (ndd.ImageType is the enum dtype)
    assert gray.shape[2] == 1
    with pytest.raises(ValueError, match="Invalid device"):
        ndd.imread(f[0], device="mixed")


@requires_native_ndd
def test_imread_matches_native(image_dir):
    import nvidia.dali.experimental.dynamic as native

    f = _files(image_dir)[:3]
    a = ndd.imread(f)
    b = native.imread(f)
    for i in range(3):
        np.testing.assert_array_equal(np.asarray(a.select(i)), np.asarray(b.select(i)))


def test_external_source_iterable_callable_and_outputs():
    es = ndd.ExternalSource([np.full((2, 2), i) for i in range(3)])
    es()
    t = es()
    assert isinstance(t, ndd.Tensor)
    np.testing.assert_array_equal(np.asarray(t), np.full((2, 2), 1))
    es()
    with pytest.raises(StopIteration):
        es()
    b = ndd.ExternalSource(lambda: np.arange(3))(batch_size=2)
    assert isinstance(b, ndd.Batch) and b.batch_size == 2
    a, c = ndd.ExternalSource(lambda: (np.zeros(4), np.ones(4)), num_outputs=2)()
    np.testing.assert_array_equal(np.asarray(c), np.ones(4))
    lay = ndd.ExternalSource(lambda: np.zeros((2, 2, 3), np.uint8), layout="HWC", dtype=ndd.float32)()
    assert lay.layout == "HWC" and lay.dtype == ndd.float32
    bat = ndd.ExternalSource(lambda: ndd.batch([np.zeros(2), np.ones(2)]))()
    assert isinstance(bat, ndd.Batch)
    with pytest.raises(ValueError, match="Expected batch size"):
        ndd.ExternalSource(lambda: ndd.batch([np.zeros(2)]))(batch_size=3)


def test_external_source_cycle_and_errors():
    q = ndd.ExternalSource([np.array([i]) for i in range(2)], cycle="quiet")
    assert [int(np.asarray(q())[0]) for _ in range(5)] == [0, 1, 0, 1, 0]
    r = ndd.ExternalSource([np.array([i]) for i in range(2)], cycle="raise")
    r(), r()
    with pytest.raises(StopIteration):
        r()
    assert int(np.asarray(r())[0]) == 0
    with pytest.raises(ValueError, match="strictly positive"):
        ndd.ExternalSource(lambda: 1, num_outputs=0)
    with pytest.raises(ValueError, match="no parameters"):
        ndd.ExternalSource(lambda info: 1)
    with pytest.raises(ValueError, match="Expected 2 outputs"):
        ndd.ExternalSource(lambda: np.zeros(2), num_outputs=2)()
    with pytest.raises(TypeError, match="uniformly"):
        ndd.ExternalSource(lambda: (np.zeros(2), ndd.batch([np.zeros(2)])), num_outputs=2)()


def test_external_source_captured_is_eager_loop():
    es = ndd.ExternalSource([ndd.batch([np.full(2, i), np.full(2, i)]) for i in range(3)])
    got = [int(np.asarray(b.select(0))[0]) for b in es.captured(batch_size=2)]
    assert got == [0, 1, 2]


def test_reader_capture_runs_eagerly(image_dir):
    a = ndd.readers.File(file_root=image_dir)
    b = ndd.readers.File(file_root=image_dir)
    ea = [bytes(np.asarray(j.select(0))) for j, _ in a.next_epoch(batch_size=4, capture=True)]
    eb = [bytes(np.asarray(j.select(0))) for j, _ in b.next_epoch(batch_size=4)]
    assert ea == eb
    with pytest.raises(ValueError, match="requires a non-None batch_size"):
        ndd.readers.File(file_root=image_dir).next_epoch(capture=True)
    x = np.arange(3)
    assert ndd.capture.invariant(x) is x


def test_eval_mode_errors_at_call_site():
    with ndd.EvalMode.deferred:
        with pytest.raises(Exception):
            ndd.flip(ndd.tensor(np.zeros((2, 2, 3), np.uint8), layout="HWC"), nonexistent=1)


def test_image_dir_fixture_has_files(image_dir):
    assert len(_files(image_dir)) == 21 and os.path.isdir(image_dir)
