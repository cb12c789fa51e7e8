"""Checks that do not need native ndd, so that they also run where it cannot (DALI 1.53 on a
machine without a CUDA driver, where native ndd fails on every operator call):

- every CPU operator of the conformance suite, runtime vs a one-operator pipeline (`fn` API) -
  the ground truth on any DALI version;
- the default (non-pipeline-compat) random stream equals the installed release's native ndd
  RNG: 2.x's backend Philox4x32-10, 1.5x's Python `random.Random` (seeded the same way,
  7 words of `_random_state` per call);
- the backend feature detection in `_backend` (which path runs, the schema names).
"""

import numpy as np
import pytest

pytest.importorskip("nvidia.dali")

import nvidia.dali.backend_impl as _b  # noqa: E402
from nvidia.dali import fn  # noqa: E402
from nvidia.dali.pipeline import Pipeline  # noqa: E402

import dali_migrate.runtime as ndd  # noqa: E402
from dali_migrate.runtime import _backend, _generate  # noqa: E402

import test_rt_conformance as conf  # noqa: E402  (input builders; imports without native ndd)

# Conformance-suite operators that a one-op pipeline cannot check the same way.
PIPELINE_SKIP = {
    **conf.SKIP,
    "DumpImage": "output is an encoded image; compared with native ndd in the conformance suite",
    "PermuteBatch": "needs the same batch on both sides; compared in the conformance suite",
}


def _table_key(name):
    """The conformance tables use 2.4's names; 1.x registers internal ops without the leading
    underscore and some ops only under experimental__ (top-level in 2.x)."""
    known = set(conf.GENERIC) | set(conf.OVERRIDES) | set(conf.SKIP)
    for key in (name, "_" + name, name.replace("experimental__", "", 1)):
        if key in known:
            return key
    return name


@pytest.mark.parametrize("name", conf.CPU_OPS)
def test_cpu_op_equals_one_op_pipeline(name):
    key = _table_key(name)
    if key in PIPELINE_SKIP:
        pytest.skip(PIPELINE_SKIP[key])
    if key not in conf.GENERIC and key not in conf.OVERRIDES:
        pytest.fail(f"{name} is in no table of test_rt_conformance (GENERIC / OVERRIDES / SKIP)")
    schema = _backend.get_schema(name)
    fn_o = conf._resolve(ndd, schema)
    assert fn_o is not None, f"runtime lacks {name}"
    ins, kwargs = conf._inputs(schema, key)
    try:
        expected = conf._pipeline_values(schema, ins, kwargs)
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"the one-op pipeline itself fails on these inputs: {type(e).__name__}")
    got = conf._values(fn_o(*[ndd.tensor(a, layout=lay) for a, lay in ins], device="cpu",
                            **kwargs))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape
        np.testing.assert_array_equal(g, e)


def _native_words(seed, n):
    """The uint32 words the installed release's native ndd RNG(seed) gives, without running
    native ndd (its RNG classes are pure Python / backend objects)."""
    if hasattr(_b, "_Philox4x32_10"):
        p = _b._Philox4x32_10(seed, 0, 0)
        return [p.next() for _ in range(n)]
    import random

    r = random.Random(seed)  # DALI 1.5x ndd: random.RNG wraps random.Random(seed)
    return [r.randint(0, 0xFFFFFFFF) for _ in range(n)]


def test_rng_words_equal_native_rng():
    rng = ndd.random.RNG(seed=11)
    assert [rng() for _ in range(10)] == _native_words(11, 10)
    clone = rng.clone()
    assert [rng() for _ in range(3)] == [clone() for _ in range(3)]
    rng2 = ndd.random.RNG(seed=11)
    rng2.advance(10)
    assert rng2() == _native_words(11, 11)[-1]


def test_default_mode_random_op_equals_pipeline_fed_the_native_state():
    """ndd.random.uniform(rng=RNG(s)) == the op fed `_random_state` = 7 words of the native RNG
    (how native ndd calls it, on every release since 1.52)."""
    words = _native_words(7, 14)
    pipe = Pipeline(batch_size=3, num_threads=1, device_id=None, prefetch_queue_depth=1,
                    exec_async=False, exec_pipelined=False)
    with pipe:
        st = fn.external_source(name="st")
        pipe.set_outputs(fn.random.uniform(range=(0, 1), shape=[5], _random_state=st))
    pipe.build()
    rng = ndd.random.RNG(seed=7)
    for call in range(2):
        state = np.array(words[7 * call: 7 * call + 7], np.uint32)
        pipe.feed_input("st", [state] * 3)
        (ref,) = pipe.run()
        got = ndd.random.uniform(range=(0, 1), shape=[5], batch_size=3, rng=rng)
        for i in range(3):
            np.testing.assert_array_equal(np.asarray(got.select(i)), np.asarray(ref[i]))


def test_backend_path_is_decided_and_works():
    out = ndd.flip(ndd.tensor(np.arange(6, dtype=np.uint8).reshape(1, 2, 3), layout="HWC"),
                   horizontal=1)
    np.testing.assert_array_equal(np.asarray(out), np.arange(6, dtype=np.uint8)
                                  .reshape(1, 2, 3)[:, ::-1])
    assert _backend.USE_PIPELINE in (True, False)
    if _backend.USE_PIPELINE and _backend.HAS_DIRECT and _backend.DIRECT_PROBLEM is None:
        pytest.fail("pipeline fallback in use without a reason")


def test_internal_schema_names_resolve():
    for name in ("_ArithmeticGenericOp", "_TensorSubscript"):
        assert _backend.get_schema(name) is not None
    assert _backend.real_name("Flip") == "Flip"


def test_no_native_ndd_import_by_the_runtime():
    """The runtime never imports native ndd (1.53's fails without a GPU at first use)."""
    import subprocess
    import sys

    code = ("import sys, numpy as np\n"
            "import dali_migrate.runtime as ndd\n"
            "ndd.flip(ndd.tensor(np.zeros((2, 2, 1), np.uint8), layout='HWC'))\n"
            "r = ndd.random.uniform(shape=[2], batch_size=2)\n"
            "bad = [m for m in sys.modules if m.startswith('nvidia.dali.experimental.dynamic')]\n"
            "assert not bad, bad\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def test_generated_api_present():
    assert callable(ndd.decoders.image) and callable(ndd.random.coin_flip)
    assert isinstance(ndd.readers.File, type)
    assert _generate.exposed("Flip")
