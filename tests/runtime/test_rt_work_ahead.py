"""Working ahead (runtime/_ahead.py): while the caller works on a reader's batch, the calls it made
on the previous batch's outputs that are deterministic and stateless run on the batch read ahead,
and the caller's same call takes that result.

What must not change: every output byte, random streams (random operators are never worked
ahead), and where an error surfaces (the caller's own call raises it).
"""

import numpy as np
import pytest

pytest.importorskip("nvidia.dali")

import dali_migrate.runtime as ndd  # noqa: E402
from dali_migrate.runtime import _ahead, _backend, _readers  # noqa: E402

_NO_GPU = _backend.cuda_device_count() == 0
# The one-op Pipeline fallback (DALI 1.53 without a CUDA driver) never works ahead (see eligible).
pytestmark = pytest.mark.skipif(_backend.use_pipeline(), reason="the pipeline fallback does not work ahead")
DEVICES = ["cpu", pytest.param("gpu", marks=[pytest.mark.gpu, pytest.mark.skipif(_NO_GPU, reason="no CUDA device")])]


@pytest.fixture(autouse=True)
def _cpu_operators_too(monkeypatch):
    """CPU operators are worked ahead only when asked (see _ahead.CPU_OPERATORS): these tests ask,
    so the mechanism runs without a GPU."""
    monkeypatch.setattr(_ahead, "CPU_OPERATORS", True)


def _loop(image_dir, on, monkeypatch, stops=(3, None, None), device="cpu"):
    monkeypatch.setattr(_readers, "_READ_AHEAD", on)
    reader = ndd.readers.File(file_root=image_dir, random_shuffle=True, seed=7, initial_fill=8)
    rng = ndd.random.RNG(seed=3)
    out = []
    for stop in stops:
        for i, (jpegs, labels) in enumerate(reader.next_epoch(batch_size=4)):
            images = ndd.decoders.image(jpegs, device=device)
            images = ndd.resize(images, size=[24, 24])  # fed by the decoder, not the reader: eager
            flip = ndd.random.coin_flip(probability=0.5, batch_size=4, rng=rng)
            images = ndd.flip(images, horizontal=flip)
            if device == "gpu":
                images = images.cpu()
            out.append([np.asarray(t).tobytes() for t in images] + [np.asarray(t).tobytes() for t in labels])
            if stop is not None and i + 1 == stop:
                break
    return out


def _drain():
    """Let the reads and calls still queued ahead end before counting them (a loop's last batches
    have the next epoch's first ones read and decoded ahead; the threads run their queues in
    order)."""
    for kind in ("read", "work"):
        _ahead.executor(kind).submit(lambda: None).result()


def _spy(monkeypatch):
    calls = {"worked": 0, "taken": 0}
    work, take = _ahead._work_ahead, _ahead.take

    def worked(*a, **k):
        calls["worked"] += 1
        return work(*a, **k)

    def taken(*a, **k):
        res = take(*a, **k)
        calls["taken"] += res[0] is not None
        return res

    monkeypatch.setattr(_ahead, "_work_ahead", worked)
    monkeypatch.setattr(_ahead, "take", taken)
    return calls


@pytest.mark.parametrize("device", DEVICES)
def test_same_bytes_as_eager_and_the_decoder_was_worked_ahead(image_dir, monkeypatch, device):
    calls = _spy(monkeypatch)
    ahead = _loop(image_dir, True, monkeypatch, device=device)
    _drain()
    used = dict(calls)
    eager = _loop(image_dir, False, monkeypatch, device=device)
    assert ahead == eager
    assert len(ahead) == 3 + 6 + 6
    # one decode per batch after the very first was handed over, unless the caller broke off
    # there; only the decoder is worked on (resize reads the decoder's outputs, flip has a tensor
    # argument)
    assert used["taken"] >= 10, used
    assert calls == used  # nothing of the kind without reading ahead


def test_cpu_operators_are_not_worked_ahead_by_default(image_dir, monkeypatch):
    monkeypatch.setattr(_ahead, "CPU_OPERATORS", False)
    calls = _spy(monkeypatch)
    assert _loop(image_dir, True, monkeypatch) == _loop(image_dir, False, monkeypatch)
    assert calls["worked"] == 0 and calls["taken"] == 0


def test_random_operators_are_not_worked_ahead(image_dir, monkeypatch):
    calls = _spy(monkeypatch)
    monkeypatch.setattr(_readers, "_READ_AHEAD", True)
    reader = ndd.readers.File(file_root=image_dir, seed=1)
    rng_a, rng_b = ndd.random.RNG(seed=9), ndd.random.RNG(seed=9)
    got = []
    for jpegs, _ in reader.next_epoch(batch_size=4):
        # a random operator on the reader's own outputs: its RNG must advance at the call only
        got.append([np.asarray(t).shape for t in ndd.decoders.image_random_crop(jpegs, rng=rng_a)])
    reader2 = ndd.readers.File(file_root=image_dir, seed=1)
    monkeypatch.setattr(_readers, "_READ_AHEAD", False)
    want = [[np.asarray(t).shape for t in ndd.decoders.image_random_crop(j, rng=rng_b)]
            for j, _ in reader2.next_epoch(batch_size=4)]
    assert got == want
    assert calls["worked"] == 0 and calls["taken"] == 0


def test_a_call_that_failed_ahead_runs_again_at_the_callers_call(image_dir, monkeypatch):
    monkeypatch.setattr(_readers, "_READ_AHEAD", True)
    reader = ndd.readers.File(file_root=image_dir, seed=1)
    made = []
    real = _ahead._work_ahead

    def failing_first(*args):
        if not made:  # the first call worked ahead fails
            made.append(1)
            raise RuntimeError("decoder on fire")
        return real(*args)

    monkeypatch.setattr(_ahead, "_work_ahead", failing_first)
    shapes = []
    for jpegs, _ in reader.next_epoch(batch_size=4):
        shapes.append([np.asarray(t).shape for t in ndd.decoders.image(jpegs, device="cpu")])
    monkeypatch.setattr(_readers, "_READ_AHEAD", False)
    reader2 = ndd.readers.File(file_root=image_dir, seed=1)
    want = [[np.asarray(t).shape for t in ndd.decoders.image(j, device="cpu")]
            for j, _ in reader2.next_epoch(batch_size=4)]
    assert made and shapes == want


def test_an_error_of_the_call_is_raised_by_the_callers_call(tmp_path, image_dir, monkeypatch):
    """A batch with a file that is not an image: the decoder worked ahead fails; the caller's own
    decode call of that batch raises DALI's error, and the batches before it were decoded."""
    import shutil

    d = tmp_path / "data" / "a"
    d.mkdir(parents=True)
    jpgs = sorted(p for p in __import__("pathlib").Path(image_dir).rglob("*.jpg"))[:8]
    for i, p in enumerate(jpgs):
        shutil.copy(p, d / f"{i:02d}.jpg")
    (d / "05.jpg").write_bytes(b"not a jpeg at all")
    def run(on):
        monkeypatch.setattr(_readers, "_READ_AHEAD", on)
        reader = ndd.readers.File(file_root=str(tmp_path / "data"))
        decoded = 0
        with pytest.raises(Exception) as err:
            for jpegs, _ in reader.next_epoch(batch_size=4):
                ndd.decoders.image(jpegs, device="cpu").evaluate()
                decoded += 1
        return decoded, type(err.value), str(err.value)

    calls = _spy(monkeypatch)
    ahead = run(True)
    _drain()
    # the second batch's decode failed ahead (and the next epoch's first batch, read ahead at
    # the end of this one, was decoded ahead too); nothing was handed over
    assert calls["worked"] == 2 and calls["taken"] == 0
    assert ahead == run(False)
    assert ahead[0] == 1  # the first batch; the second holds the broken file


def test_the_callers_own_call_on_other_data_waits_for_the_call_ahead(image_dir, monkeypatch):
    """The call ahead runs on the caller's operator instance: a call of the same operator on other
    data (a copy of the batch, not the reader's) waits for it before running the instance."""
    monkeypatch.setattr(_readers, "_READ_AHEAD", True)
    waited = []
    real = _ahead.settle

    def settle(op):
        waited.append(op._ahead_future is not None)
        real(op)

    monkeypatch.setattr(_ahead, "settle", settle)
    reader = ndd.readers.File(file_root=image_dir, seed=1)
    got = []
    for jpegs, _ in reader.next_epoch(batch_size=4):
        a = ndd.decoders.image(jpegs, device="cpu")
        b = ndd.decoders.image(ndd.as_batch([np.asarray(t) for t in jpegs]), device="cpu")
        got.append(([np.asarray(t).tobytes() for t in a], [np.asarray(t).tobytes() for t in b]))
    assert all(x == y for x, y in got)
    assert any(waited)


def test_calls_ahead_are_queued_for_every_batch_being_read(image_dir, monkeypatch):
    """With two batches read ahead, the call on batch i+2 is queued when the caller takes i+1's
    result, so the calls ahead run back to back instead of waiting for the caller each time; at
    an epoch's end the reads and calls go on into the next epoch."""
    monkeypatch.setattr(_readers, "_READ_AHEAD", True)
    monkeypatch.setattr(_readers, "_READ_DEPTH", 2)
    calls = _spy(monkeypatch)
    reader = ndd.readers.File(file_root=image_dir, seed=1)
    queued = []
    for _ in range(2):
        for jpegs, _ in reader.next_epoch(batch_size=4):
            ndd.decoders.image(jpegs, device="cpu")
            queued.append(sum(len(v) for v in reader._work.values()))
    assert queued == [2] * 12
    assert calls["taken"] == 11  # every batch's but the very first, the second epoch's included
