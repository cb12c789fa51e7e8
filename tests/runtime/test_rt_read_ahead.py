"""Readers read the epoch's next batch ahead on a thread of their own (runtime/_readers.py; off
with DALI_MIGRATE_READ_AHEAD=0, see _READ_AHEAD there).

What must not change: the items and their order (with breaks mid-epoch too), and where an error
of a read surfaces (at the next() that asks for that batch, and the reader goes on after it).
"""

import numpy as np
import pytest

pytest.importorskip("nvidia.dali")

import dali_migrate.runtime as ndd  # noqa: E402
from dali_migrate.runtime import _readers  # noqa: E402


def _key(batches):
    return [(tuple(int(np.asarray(t).item()) for t in labels), tuple(np.asarray(j).tobytes() for j in jpegs))
            for jpegs, labels in batches]


def _stream(image_dir, read_ahead, monkeypatch):
    """Batches of a shuffled reader, with the caller stopping mid-epoch twice."""
    monkeypatch.setattr(_readers, "_READ_AHEAD", read_ahead)
    reader = ndd.readers.File(file_root=image_dir, random_shuffle=True, seed=5, initial_fill=8)
    got, seen_ahead = [], False
    for stop in (2, None, 4, None, None):
        for i, batch in enumerate(reader.next_epoch(batch_size=4)):
            seen_ahead |= bool(reader._ahead)
            got.append(batch)
            if stop is not None and i + 1 == stop:
                break
    return _key(got), seen_ahead


def test_same_batches_as_reading_on_demand_with_breaks(image_dir, monkeypatch):
    ahead, seen = _stream(image_dir, True, monkeypatch)
    eager, seen_eager = _stream(image_dir, False, monkeypatch)
    assert seen and not seen_eager  # the read-ahead path really ran (and only there)
    assert len(ahead) == len(eager) == 2 + 6 + 4 + 6 + 6
    assert ahead == eager


class _FailingRuns:
    """The reader's backend operator, failing its `fail_at`-th run (0-based)."""

    def __init__(self, op, fail_at):
        self._op, self._fail_at, self.runs = op, fail_at, 0

    def run(self, *args):
        n, self.runs = self.runs, self.runs + 1
        if n == self._fail_at:
            raise RuntimeError("disk on fire")
        return self._op.run(*args)

    def __getattr__(self, name):
        return getattr(self._op, name)


def test_a_failed_read_surfaces_at_its_own_next_and_the_epoch_goes_on(image_dir, monkeypatch):
    monkeypatch.setattr(_readers, "_READ_AHEAD", True)
    depth = _readers._READ_DEPTH
    reader = ndd.readers.File(file_root=image_dir)
    it = reader.next_epoch(batch_size=4)
    got = [next(it)]  # creates the operator; the next `depth` batches are being read ahead now
    reader._settle()
    # the next run: that of the batch read ahead when the second batch is handed out
    reader._op = _FailingRuns(reader._op, fail_at=0)
    for _ in range(depth):
        got.append(next(it))
        reader._settle()
    assert reader._op.runs == 1  # it was read ahead, and failed there
    with pytest.raises(RuntimeError, match="disk on fire"):
        next(it)
    # a generator that raised is finished; a new next_epoch goes on from the reader's position
    rest = list(reader.next_epoch(batch_size=4))
    assert len(rest) == 6  # the epoch size again
    labels = [int(np.asarray(t).item()) for b in (*got, *rest) for t in b[1]]
    # files in order, 7 per class; the failed run did not move the operator, so the stream
    # goes on with the batch whose read failed, and no batch was read after it
    n = 4 * (1 + depth)
    assert labels[:n + 4] == [i // 7 for i in range(n + 4)]


@pytest.mark.parametrize("stick", [False, True])
def test_reads_into_the_next_epoch_give_each_epoch_its_own_batches(image_dir, monkeypatch, stick):
    """Near an epoch's end the reads go on into the next epoch, whose size depends on the shard
    the reader moves to (24 files over 5 shards: 4 or 5 samples, so 1 or 2 batches of 4)."""
    def epochs(read_ahead):
        monkeypatch.setattr(_readers, "_READ_AHEAD", read_ahead)
        reader = ndd.readers.File(file_root=image_dir, random_shuffle=True, seed=3,
                                  initial_fill=8, num_shards=5, shard_id=4, stick_to_shard=stick)
        return [_key(reader.next_epoch(batch_size=4)) for _ in range(7)]

    ahead, eager = epochs(True), epochs(False)
    assert [len(e) for e in ahead] == [len(e) for e in eager]
    assert ahead == eager
