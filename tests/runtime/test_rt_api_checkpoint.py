"""Reader checkpointing (get_state/set_state through the backend's SaveCheckpoint /
RestoreCheckpoint) and the `checkpoint` module, as native ndd 2.4."""

import numpy as np
import pytest

pytest.importorskip("nvidia.dali")

from conftest import requires_native_ndd  # noqa: E402

import dali_migrate.runtime as ndd  # noqa: E402
from dali_migrate.runtime import _backend  # noqa: E402

pytestmark = pytest.mark.skipif(
    _backend.use_pipeline(), reason="checkpointing needs the direct backend operator path")

BS = 4


def _reader(image_dir, **kw):
    return ndd.readers.File(file_root=image_dir, random_shuffle=True, seed=3,
                            enable_checkpointing=True, **kw)


def _key(batches):
    """Encoded file bytes and labels of each batch (identifies the samples and their order)."""
    return [([bytes(np.asarray(x)) for x in jpegs], [int(np.asarray(l)[0]) for l in labels])
            for jpegs, labels in batches]


def test_save_mid_epoch_restore_continues_identically(image_dir):
    r = _reader(image_dir)
    it = r.next_epoch(batch_size=BS)
    for _ in range(3):
        next(it)
    state = r.get_state()
    assert isinstance(str(state), str) and state == str(state)
    # the original's continuation: the rest of this epoch and the next one
    original = list(it) + list(r.next_epoch(batch_size=BS))
    r2 = _reader(image_dir)
    r2.set_state(str(state))
    restored = list(r2.next_epoch(batch_size=BS)) + list(r2.next_epoch(batch_size=BS))
    # native: a restored reader's next_epoch runs one epoch's worth of samples from there
    n = min(len(original), len(restored))
    assert n == len(original) >= 9
    assert _key(restored[:n]) == _key(original[:n])


def test_samples_api_restore(image_dir):
    r = _reader(image_dir)
    it = r.next_epoch()
    for _ in range(5):
        next(it)
    state = r.get_state()
    original = [bytes(np.asarray(j)) for j, _ in list(it)[:8]]
    r2 = _reader(image_dir)
    r2.set_state(state)  # a ReaderState object works too
    restored = [bytes(np.asarray(j)) for j, _ in list(r2.next_epoch())[:8]]
    assert restored == original


def test_state_errors(image_dir):
    r = _reader(image_dir)
    with pytest.raises(RuntimeError, match="before its first iteration"):
        r.get_state()
    next(iter(r.next_epoch(batch_size=BS)))
    with pytest.raises(RuntimeError, match="after iteration has begun"):
        r.set_state(str(r.get_state()))
    with pytest.raises(TypeError, match="state must be"):
        _reader(image_dir).set_state(12)
    plain = ndd.readers.File(file_root=image_dir)
    next(iter(plain.next_epoch(batch_size=BS)))
    with pytest.raises(RuntimeError, match="checkpointing disabled"):
        plain.get_state()
    with pytest.raises(NotImplementedError, match="capture mode"):
        _reader(image_dir).next_epoch(batch_size=BS, capture=True)


def test_checkpoint_register_collect_save_load(image_dir, tmp_path):
    r = _reader(image_dir)
    rng = ndd.random.RNG(seed=42)
    ck = ndd.checkpoint.Checkpoint()
    assert ck.register(r, "reader") == "reader"
    assert ck.register(rng) == "__op_1"
    assert ck.register(rng) == "__op_1" and len(ck) == 2 and "reader" in ck
    it = r.next_epoch(batch_size=BS)
    for _ in range(2):
        next(it)
    ndd.random.uniform(batch_size=3, rng=rng)
    ck.collect()
    assert ck.is_complete
    pattern = str(tmp_path / "ckpt_{seq:04d}.json")
    p0 = ck.save(pattern)
    assert p0.endswith("ckpt_0000.json")
    assert ck.save(pattern).endswith("ckpt_0001.json")
    original = list(it)
    draws = np.asarray(ndd.random.uniform(batch_size=3, rng=rng).torch())

    r2 = _reader(image_dir)
    rng2 = ndd.random.RNG(seed=1)
    ck2 = ndd.checkpoint.Checkpoint()
    assert ck2.load(pattern).endswith("ckpt_0001.json")
    assert ck2.is_loaded
    ck2.register(r2, "reader")  # states apply at registration
    ck2.register(rng2)
    restored = list(r2.next_epoch(batch_size=BS))[:len(original)]
    assert _key(restored) == _key(original)
    np.testing.assert_array_equal(
        np.asarray(ndd.random.uniform(batch_size=3, rng=rng2).torch()), draws)


def test_checkpoint_errors(image_dir, tmp_path):
    ck = ndd.checkpoint.Checkpoint()
    with pytest.raises(RuntimeError, match="empty checkpoint"):
        ck.serialize()
    with pytest.raises(ValueError, match="must not start with"):
        ck.register(ndd.random.RNG(seed=1), "__op_x")
    with pytest.raises(ValueError, match=r"must include `\{seq\}`"):
        ck.load(str(tmp_path / "nope.json"))
    with pytest.raises(FileNotFoundError):
        ck.load(str(tmp_path / "none_{seq}.json"))
    ck.set_state("rng", str(ndd.random.RNG(seed=3).get_state()), op_type="RNG")
    with pytest.raises(TypeError, match="Type mismatch"):
        ck.register(_reader(image_dir), "rng")
    # registering a used reader without checkpointing: native's error
    plain = ndd.readers.File(file_root=image_dir)
    next(iter(plain.next_epoch(batch_size=BS)))
    with pytest.raises(RuntimeError, match="checkpointing disabled"):
        ndd.checkpoint.Checkpoint().register(plain)


def test_register_enables_checkpointing_before_first_use(image_dir):
    r = ndd.readers.File(file_root=image_dir)
    ndd.checkpoint.Checkpoint().register(r, "r")
    next(iter(r.next_epoch(batch_size=BS)))
    assert str(r.get_state())


def test_context_checkpoint_and_current():
    ctx = ndd.EvalContext()
    assert isinstance(ctx.checkpoint, ndd.checkpoint.Checkpoint)
    assert ctx.checkpoint is ctx.checkpoint
    with ctx:
        assert ndd.checkpoint.current() is ctx.checkpoint


@requires_native_ndd
def test_state_interchangeable_with_native(image_dir):
    import nvidia.dali.experimental.dynamic as native

    nr = native.readers.File(file_root=image_dir, random_shuffle=True, seed=3,
                             enable_checkpointing=True)
    it = nr.next_epoch(batch_size=BS)
    for _ in range(2):
        next(it)
    native_state = str(nr.get_state())
    r = _reader(image_dir)
    it2 = r.next_epoch(batch_size=BS)
    for _ in range(2):
        next(it2)
    assert str(r.get_state()) == native_state
    nr2 = native.readers.File(file_root=image_dir, random_shuffle=True, seed=3,
                              enable_checkpointing=True)
    nr2.set_state(native_state)
    r2 = _reader(image_dir)
    r2.set_state(native_state)
    a = [([bytes(np.asarray(x)) for x in j], None) for j, _ in nr2.next_epoch(batch_size=BS)]
    b = [([bytes(np.asarray(x)) for x in j], None) for j, _ in r2.next_epoch(batch_size=BS)]
    assert a == b
