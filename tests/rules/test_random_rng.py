from _helpers import pipeline


def test_pipeline_seed_becomes_one_rng_before_the_loop():
    out = pipeline("a = fn.random.uniform()\nb = fn.random.coin_flip()\nreturn a, b\n", "@pipeline_def(batch_size=4, seed=7)")
    assert "def p(*, batch_size=4, num_threads=None, device_id=None, seed=7):" in out
    assert out.count("ndd.random.RNG(seed=seed)") == 1
    assert out.index("rng = ndd.random.RNG(seed=seed)") < out.index("while True")
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
