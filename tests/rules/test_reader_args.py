import pytest

from dali_migrate.engine import convert_source
from _helpers import HEADER, pipeline


def test_name_dropped_sharding_kept():
    out = pipeline('j, l = fn.readers.file(file_root="d", shard_id=1, num_shards=2, name="Reader")\nreturn j, l\n')
    assert 'ndd.readers.File(file_root="d", shard_id=1, num_shards=2)' in out


def test_shuffling_reader_gets_pipeline_seed():
    out = pipeline('j, l = fn.readers.file(file_root="d", random_shuffle=True)\nreturn j, l\n')
    assert "random_shuffle=True, seed=seed_or_random)" in out


def test_explicit_reader_seed_kept():
    out = pipeline('j, l = fn.readers.file(file_root="d", random_shuffle=True, seed=5)\nreturn j, l\n')
    assert "seed=5)" in out and "seed_or_random" not in out


def test_reader_created_once_and_loop_over_epochs():
    out = pipeline('j, l = fn.readers.file(file_root="d")\nreturn j, l\n')
    assert out.index("reader = ndd.readers.File") < out.index("while True:") < out.index("for j, l in reader.next_epoch(batch_size=batch_size):")


TWO_SHUFFLING = 'a, b = fn.readers.file(file_root="d", random_shuffle=True{})\nc, e = fn.readers.file(file_root="e", random_shuffle=True{})\nreturn a, c\n'


def test_two_readers_that_would_take_the_pipeline_seed_are_marked():
    out = pipeline(TWO_SHUFFLING.format("", ""), decorator="@pipeline_def(batch_size=4, seed=3)")
    assert "# dali-migrate: [pipeline-def] pipeline not converted: 2 readers shuffle with no seed= of their own" in out
    assert "@pipeline_def(batch_size=4, seed=3)" in out and "ndd." not in out


def test_two_readers_with_seeds_of_their_own_keep_them():
    out = pipeline(TWO_SHUFFLING.format(", seed=5", ", seed=5"))
    assert 'reader = ndd.readers.File(file_root="d", random_shuffle=True, seed=5)' in out
    assert 'reader_2 = ndd.readers.File(file_root="e", random_shuffle=True, seed=5)' in out


def test_one_of_two_shuffling_readers_takes_the_pipeline_seed():
    out = pipeline(TWO_SHUFFLING.format(", seed=5", ""))
    assert "dali-migrate:" not in out
    assert 'reader_2 = ndd.readers.File(file_root="e", random_shuffle=True, seed=seed_or_random)' in out


def test_a_reader_that_does_not_shuffle_takes_no_seed_beside_one_that_does():
    out = pipeline('a, b = fn.readers.file(file_root="d")\nc, e = fn.readers.file(file_root="e", shuffle_after_epoch=True)\nreturn a, c\n')
    assert 'reader = ndd.readers.File(file_root="d")\n' in out
    assert 'reader_2 = ndd.readers.File(file_root="e", shuffle_after_epoch=True, seed=seed_or_random)' in out


SHUFFLED = (
    "import numpy as np\n"
    "\n"
    "@pipeline_def(batch_size=4, num_threads=1, device_id=None{seed})\n"
    "def labels_pipe(root):\n"
    "    _, labels = fn.readers.file(file_root=root, random_shuffle=True, initial_fill=64)\n"
    "    return labels\n"
    "\n"
    "def first_labels(root):\n"
    "    pipe = labels_pipe(root)\n"
    "    pipe.build()\n"
    "    return [int(x) for _ in range(3) for x in np.asarray(pipe.run()[0].as_tensor()).ravel()]\n"
)


def _check_orders(tmp_path, src, out, root, fixed: bool):
    """Three runs of the original and of the converted code: the same order every run in each
    exactly where ``fixed`` (a pipeline seed), a new one every run otherwise."""
    from _modules import load_source

    orders = {kind: [getattr(load_source(tmp_path, f"{kind}_{i}", text), "first_labels")(root) for i in range(3)]
              for kind, text in (("original", src), ("converted", out))}
    for kind, runs in orders.items():
        assert (len({tuple(r) for r in runs}) == 1) == fixed, (kind, runs)


@pytest.mark.parametrize("seed", ["", ", seed=5"], ids=["unseeded", "seeded"])
def test_shuffle_order_changes_between_runs_only_without_a_seed(tmp_path, fixture_data, seed):
    """Without a seed a pipeline draws one each time it is made, so its reader's order changes from
    run to run; ndd's reader given seed=None would shuffle the same way every time. With one, the
    order is the same every time, in both."""
    src = HEADER + SHUFFLED.format(seed=seed)
    out = convert_source(src).output
    assert "@pipeline_def" not in out and "seed=seed_or_random" in out
    _check_orders(tmp_path, src, out, str(fixture_data / "images"), fixed=bool(seed))


OWN_SEED_NONE = SHUFFLED.replace("def labels_pipe(root):", "def labels_pipe(root, s=None):").replace(
    "initial_fill=64)", "initial_fill=64, seed=s)"
)


@pytest.mark.parametrize("seed", ["", ", seed=5"], ids=["unseeded", "seeded"])
def test_reader_seed_that_is_none_is_no_seed(tmp_path, fixture_data, seed):
    """A reader given seed=None takes a seed from the pipeline's, as one without seed= does: the
    same order every run only where the pipeline has a seed. ndd's reader given seed=None would
    shuffle in one fixed order whatever the pipeline's seed."""
    src = HEADER + OWN_SEED_NONE.format(seed=seed)
    out = convert_source(src).output
    assert "@pipeline_def" not in out and "seed=s if s is not None else seed_or_random)" in out
    _check_orders(tmp_path, src, out, str(fixture_data / "images"), fixed=bool(seed))


def test_reader_seed_written_none_takes_the_pipeline_seed():
    out = pipeline('j, l = fn.readers.file(file_root="d", random_shuffle=True, seed=None)\nreturn j, l\n')
    assert "random_shuffle=True, seed=seed_or_random)" in out


def test_readers_whose_seed_may_be_none_fall_back_to_seeds_of_their_own():
    # DeepCAM's data and label readers share seed=self.seed to stay paired; were it None, the
    # pipeline would give each a seed of its own, so the converted ones fall back to different ones
    out = pipeline(TWO_SHUFFLING.format(", seed=args.seed", ", seed=args.seed"))
    assert "dali-migrate:" not in out
    assert 'random_shuffle=True, seed=args.seed if args.seed is not None else seed_or_random)' in out
    assert 'random_shuffle=True, seed=args.seed if args.seed is not None else seed_or_random ^ 1)' in out
    out = pipeline(TWO_SHUFFLING.format("", ", seed=s"))
    assert 'file_root="d", random_shuffle=True, seed=seed_or_random)' in out
    assert 'file_root="e", random_shuffle=True, seed=s if s is not None else seed_or_random ^ 1)' in out


def test_reader_seed_that_may_be_none_and_cannot_be_read_twice_is_marked():
    out = pipeline('j, l = fn.readers.file(file_root="d", random_shuffle=True, seed=pick())\nreturn j, l\n')
    assert "fn.readers.file: its seed= may be None" in out
