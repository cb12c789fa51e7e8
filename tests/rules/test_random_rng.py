import pytest

from dali_migrate.engine import convert_source
from _helpers import HEADER, pipeline, run_both


def test_pipeline_seed_becomes_one_rng_before_the_loop():
    out = pipeline("a = fn.random.uniform()\nb = fn.random.coin_flip()\nreturn a, b\n", "@pipeline_def(batch_size=4, seed=7)")
    assert "def p(*, batch_size=4, num_threads=None, device_id=None, seed=7):" in out
    assert out.count("ndd.random.RNG(seed=") == 1 and "import secrets" in out
    assert out.index("rng = ndd.random.RNG(seed=seed_or_random)") < out.index("while True")
    assert out.count("rng=rng") == 2


def test_own_seed_becomes_own_rng():
    out = pipeline("return fn.random.coin_flip(seed=3)\n")
    assert "rng_coin_flip = ndd.random.RNG(seed=3)" in out
    assert "rng=rng_coin_flip" in out and "seed=3)" in out


def test_seed_minus_one_means_none():
    out = pipeline("return fn.random.uniform()\n", "@pipeline_def(batch_size=4, seed=-1)")
    assert "seed=None" in out


def test_seed_computed_per_iteration_blocks():
    out = pipeline("x = fn.random.uniform()\nreturn fn.random.coin_flip(seed=x)\n")
    assert "@pipeline_def" in out and "seed= depends on values computed per iteration" in out


def test_no_random_ops_no_rng():
    out = pipeline("return fn.transforms.rotation(angle=3.0)\n")
    assert "RNG" not in out


def test_seed_read_from_outside_the_pipeline_is_fixed_when_it_is_made():
    # JAX-Toolbox's ViT loader: seed=self.seed of the method around the pipeline
    out = pipeline("return fn.random.coin_flip(seed=self.seed + OFFSET)\n")
    assert "rng_coin_flip = ndd.random.RNG(seed=self.seed + OFFSET)" in out
    assert out.index("rng_coin_flip = ndd.random.RNG") < out.index("while True")


UNSEEDED = (
    "import random\n"
    "import numpy as np\n"
    "\n"
    "@pipeline_def(batch_size=2, num_threads=1, device_id=None)\n"
    "def noisy():\n"
    "    return fn.random.uniform(range=[0.0, 1.0])\n"
    "\n"
    "def after_seeding():\n"
    "    random.seed(0)\n"
    "    pipe = noisy()\n"
    "    pipe.build()\n"
    "    (draws,) = pipe.run()\n"
    "    return [float(x) for x in np.asarray(draws.as_tensor())], random.random()\n"
)


def test_unseeded_pipeline_leaves_pythons_random_alone(tmp_path):
    """A pipeline without a seed seeds its operators in C++: the program's own `random` draws stay
    as they were, and two pipelines made after the same random.seed() differ. The converted RNG
    must not take its seed from `random` (ndd.random.RNG(seed=None) would)."""
    pytest.importorskip("nvidia.dali")
    import random

    src = HEADER + UNSEEDED
    out = convert_source(src).output
    assert "@pipeline_def" not in out and "secrets.randbits(63)" in out
    random.seed(0)
    untouched = random.random()
    (want_draws, want_next), (got_draws, got_next) = run_both(tmp_path, src, out, "after_seeding")
    assert want_next == untouched and got_next == untouched
    (tmp_path / "again").mkdir()
    _, (again_draws, _) = run_both(tmp_path / "again", src, out, "after_seeding")
    assert got_draws != again_draws  # (2 uniform floats equal by chance: about 2**-46)


OWN_SEED = (
    "import random\n"
    "import numpy as np\n"
    "\n"
    "@pipeline_def(batch_size=2, num_threads=1, device_id=None{pipeline_seed})\n"
    "def noisy(s):\n"
    "    return fn.random.uniform(range=[0.0, 1.0], seed=s), fn.random.normal(seed=None)\n"
    "\n"
    "def draws(s):\n"
    "    random.seed(0)\n"
    "    pipe = noisy(s)\n"
    "    pipe.build()\n"
    "    a, b = pipe.run()\n"
    "    return [float(x) for x in np.asarray(a.as_tensor())] + [float(x) for x in np.asarray(b.as_tensor())], random.random()\n"
)


@pytest.mark.parametrize("pipeline_seed", [", seed=5", ""], ids=["seeded", "unseeded"])
def test_own_seed_that_is_none_is_no_seed(tmp_path, pipeline_seed):
    """An operator given seed=None (written out, or a parameter that is None) takes a seed derived
    from the pipeline's, as one without seed= does: the same draws for the same pipeline seed, new
    ones for a pipeline without a seed, and Python's `random` left alone. ndd's
    RNG(seed=None) would seed itself from `random` instead."""
    pytest.importorskip("nvidia.dali")
    import random

    src = HEADER + OWN_SEED.format(pipeline_seed=pipeline_seed)
    out = convert_source(src).output
    assert "@pipeline_def" not in out and "RNG(seed=None)" not in out
    assert "rng_uniform = ndd.random.RNG(seed=s) if s is not None else rng" in out
    random.seed(0)
    untouched = random.random()
    runs = []
    for i in range(2):
        (tmp_path / str(i)).mkdir()
        (want, want_next), (got, got_next) = run_both(tmp_path / str(i), src, out, "draws", None)
        assert want_next == untouched and got_next == untouched
        runs.append((want, got))
    for k in (0, 1):  # original, converted: the same draws twice only with a pipeline seed
        assert (runs[0][k] == runs[1][k]) == bool(pipeline_seed), (k, runs)
    # a seed given keeps its own stream, whatever the pipeline's seed
    (tmp_path / "given").mkdir()
    (want, _), (got, _) = run_both(tmp_path / "given", src, out, "draws", 11)
    (tmp_path / "again").mkdir()
    (want2, _), (got2, _) = run_both(tmp_path / "again", src, out, "draws", 11)
    assert want[:2] == want2[:2] and got[:2] == got2[:2]


def test_own_seed_from_a_call_is_read_where_the_pipeline_read_it():
    # the pipeline called pick_hi() and then pick_seed() when it made the operators; the seed's
    # value must not be named like the pipeline's seed setting, nor the range like the builtin
    out = pipeline("x = fn.random.uniform(range=[0, pick_hi()])\nreturn x, fn.random.coin_flip(seed=pick_seed())\n")
    assert "dali-migrate:" not in out
    assert "range_2 = pick_hi()\n" in out and "seed_2 = pick_seed()\n" in out
    assert "rng_coin_flip = ndd.random.RNG(seed=seed_2) if seed_2 is not None else rng\n" in out
    assert out.index("range_2 = ") < out.index("seed_2 = ") < out.index("rng_coin_flip = ") < out.index("while True")
    assert "uniform(range=[0, range_2]" in out


def test_own_seed_that_may_be_none_and_cannot_be_read_twice_is_read_once_into_a_name():
    out = pipeline("return fn.random.coin_flip(seed=a or b)\n")
    assert "dali-migrate:" not in out
    assert "rng_coin_flip_seed = a or b\n" in out
    assert "rng_coin_flip = ndd.random.RNG(seed=rng_coin_flip_seed) if rng_coin_flip_seed is not None else rng\n" in out
    assert out.index("rng_coin_flip_seed = ") < out.index("rng_coin_flip = ") < out.index("while True")


def test_negative_own_seed_is_a_seed():
    # an operator given seed=-1 draws one fixed stream whatever the pipeline's seed; so does RNG(seed=-1)
    out = pipeline("return fn.random.coin_flip(seed=-1)\n")
    assert "rng_coin_flip = ndd.random.RNG(seed=-1)\n" in out


def test_seeded_operator_in_a_comprehension_is_marked():
    # each evaluation was an operator with an RNG of its own (two with seed 42 draw alike), and the
    # seed may read the comprehension's variable, which does not exist before the loop
    for body in ("a, b = [fn.random.uniform(range=[0, 1], seed=42) for _ in range(2)]\nreturn a, b\n",
                 "a, b, c = [fn.random.uniform(range=[0, 1], seed=k) for k in (1, 2, 1)]\nreturn a, b, c\n"):
        out = pipeline(body)
        assert "@pipeline_def" in out and "is called in a comprehension or lambda" in out, out
    out = pipeline("a, b = [fn.random.uniform(range=[0, 1]) for _ in range(2)]\nreturn a, b\n")
    assert "is called in a comprehension" not in out
