"""verify gives the converted code's random calls the seeds of the original operators that ran.

A random operator in a branch the pipeline did not take (a Python flag chooses it) was never
created, so it has no seed; the converted code keeps both branches' calls. Matching seeds by the
converted text shifted every later operator of the same kind: a correct conversion was reported
NOT equivalent.
"""

import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("nvidia.dali")

from dali_migrate.cli import main  # noqa: E402
from dali_migrate.engine import convert_source  # noqa: E402
from dali_migrate.verify import Options, VerifyError, verify  # noqa: E402

CASE = Path(__file__).parent / "verify_cases" / "branch_random.py"


def _params(name, images, flag):
    if name == "TrainPipe":  # a Pipeline subclass takes its settings as its own parameters
        return {"batch_size": 4, "num_threads": 2, "device_id": None, "data_dir": images, "dali_cpu": flag}
    return {"root": images, "use_aug": flag}


@pytest.fixture(scope="module")
def images(fixture_data):
    return str(fixture_data / "images")


@pytest.fixture(scope="module")
def converted_text():
    result = convert_source(CASE.read_text())
    assert result.markers == []
    return result.output


@pytest.mark.parametrize("name", ["TrainPipe", "augment"])
@pytest.mark.parametrize("flag", [False, True])
def test_operator_in_an_untaken_branch_takes_no_seed(name, flag, images):
    verdict = verify(Options(original=CASE, name=name, params=_params(name, images, flag), iterations=3))
    assert verdict.equal, verdict.describe()
    assert verdict.notes == []


# (pipeline, flag, pattern in the converted text, replacement, output that must differ)
EDITS = [
    ("TrainPipe", False, r"probability=0\.7", "probability=0.6", 2),  # the branch taken
    ("TrainPipe", True, r"probability=0\.2", "probability=0.3", 2),  # the other branch, taken
    ("TrainPipe", False, r"probability=0\.5", "probability=0.4", 0),  # after the branches
    ("augment", False, r"range=\[0\.5, 1\.5\]", "range=[0.5, 1.4]", 0),
]


@pytest.mark.parametrize("name,flag,pattern,replacement,output", EDITS, ids=[f"{e[0]}-{e[1]}-{e[3]}" for e in EDITS])
def test_an_edited_argument_is_still_a_difference(name, flag, pattern, replacement, output, converted_text, images, tmp_path):
    edited, n = re.subn(pattern, replacement, converted_text)
    assert n == 1, f"{pattern} did not apply: the converted code changed shape"
    path = tmp_path / "edited.py"
    path.write_text(edited)
    verdict = verify(Options(original=CASE, name=name, against=path, params=_params(name, images, flag), iterations=3))
    assert not verdict.equal
    assert verdict.mismatch.output == output, verdict.describe()


def test_an_edit_in_the_branch_not_taken_changes_nothing(converted_text, images, tmp_path):
    path = tmp_path / "edited.py"
    path.write_text(converted_text.replace("probability=0.2", "probability=0.3"))
    verdict = verify(Options(original=CASE, name="TrainPipe", against=path, params=_params("TrainPipe", images, False), iterations=3))
    assert verdict.equal, verdict.describe()


TWO_DRAWS = """\
from nvidia.dali import fn, pipeline_def


@pipeline_def(batch_size=2, num_threads=2, device_id=0, seed=3)
def two_draws():
    return fn.random.uniform(range=[0.0, 1.0]), fn.random.uniform(range=[0.0, 1.0])
"""

# Converted by hand through a helper: both operators come from one call site, which the runtime's
# pipeline-compatible mode runs as one operator; which seed it should take cannot be told.
TWO_DRAWS_HELPER = """\
import nvidia.dali.experimental.dynamic as ndd


def draw(batch_size, rng):
    return ndd.random.uniform(range=[0.0, 1.0], batch_size=batch_size, rng=rng)


def two_draws(*, batch_size=2, num_threads=2, device_id=0, seed=3):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    rng = ndd.random.RNG(seed=seed)
    while True:
        with ctx:
            outputs = draw(batch_size, rng), draw(batch_size, rng)
        yield outputs
"""


def test_operators_that_cannot_be_matched_are_not_checked(tmp_path):
    original = tmp_path / "two_draws.py"
    original.write_text(TWO_DRAWS)
    against = tmp_path / "two_draws_ndd.py"
    against.write_text(TWO_DRAWS_HELPER)
    with pytest.raises(VerifyError, match=r"cannot match random operators.*random__Uniform.*not checked"):
        verify(Options(original=original, against=against, iterations=2))
    result = CliRunner().invoke(main, ["verify", str(original), "--against", str(against), "--iterations", "2"])
    assert result.exit_code == 2, result.output
    assert "not checked" in result.output and "NOT equivalent" not in result.output


def test_a_call_that_first_runs_late_is_not_matched():
    from dali_migrate.verify.run import _RunOrderSeeds

    # Two uniform operators in the original, seeded 11 and 22, created at lines 5 and 6.
    original = [("random__Uniform", 5, 11), ("random__Uniform", 6, 22)]
    on_time = _RunOrderSeeds(3, original, {})
    seeds = [on_time.seed_for(sys._getframe(), "random__Uniform"), on_time.seed_for(sys._getframe(), "random__Uniform")]
    assert seeds == [11, 22] and on_time.unmatched() == []
    # The second call site first runs in iteration 1 (a branch on data, say): its place is a guess.
    late = _RunOrderSeeds(3, original, {})
    late.seed_for(sys._getframe(), "random__Uniform")
    late.iteration = 1
    late.seed_for(sys._getframe(), "random__Uniform")
    assert any("first ran in iteration 1" in r for r in late.unmatched()), late.unmatched()
    # A call site asked again keeps its seed and takes no second place.
    again = _RunOrderSeeds(3, original, {})
    for _ in range(2):
        assert again.seed_for(sys._getframe(), "random__Uniform") == 11
    assert any("ran 1 call site(s)" in r for r in again.unmatched()), again.unmatched()


OWN_SEED = TWO_DRAWS.replace("fn.random.uniform(range=[0.0, 1.0]),", "fn.random.uniform(range=[0.0, 1.0], seed=42),")
# A hand conversion that keeps the first operator's seed= on the call: that call never asks the
# session for a seed, yet must keep its place among the uniform calls.
OWN_SEED_NDD = TWO_DRAWS_HELPER.replace(
    "outputs = draw(batch_size, rng), draw(batch_size, rng)",
    "outputs = ndd.random.uniform(range=[0.0, 1.0], batch_size=batch_size, seed=42), draw(batch_size, rng)",
)


def test_a_call_with_its_own_seed_keeps_its_place(tmp_path):
    assert OWN_SEED != TWO_DRAWS and OWN_SEED_NDD != TWO_DRAWS_HELPER
    original = tmp_path / "own_seed.py"
    original.write_text(OWN_SEED)
    against = tmp_path / "own_seed_ndd.py"
    against.write_text(OWN_SEED_NDD)
    verdict = verify(Options(original=original, against=against, iterations=3))
    assert verdict.equal, verdict.describe()
