"""Equivalence checking: `dali-migrate verify` and `dali_migrate.testing.assert_equivalent`."""

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("nvidia.dali")

from dali_migrate.cli import main  # noqa: E402
from dali_migrate.engine import convert_source  # noqa: E402
from dali_migrate.testing import assert_equivalent  # noqa: E402
from dali_migrate.verify import Options, VerifyError, verify  # noqa: E402
from dali_migrate.verify.slicing import slice_source  # noqa: E402

CASE = Path(__file__).parent / "verify_cases" / "augment.py"


@pytest.fixture(scope="module")
def images(fixture_data):
    return str(fixture_data / "images")


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    out = tmp_path_factory.mktemp("conv") / "augment_ndd.py"
    out.write_text(convert_source(CASE.read_text()).output)
    return out


def test_random_pipeline_is_equivalent_across_an_epoch(images):
    verdict = verify(Options(original=CASE, name="augment", params={"root": images}))
    assert verdict.equal, verdict.describe()
    # 21 images, batch 4: 6 iterations per epoch, +2 into the next
    assert verdict.iterations == 8 and verdict.outputs == 2


def test_against_a_converted_file(images, converted):
    assert_equivalent(CASE, "augment", against=converted, params={"root": images}, iterations=7)


def test_other_seed_and_batch_size(images):
    verdict = verify(Options(original=CASE, name="augment", params={"root": images}, seed=99, batch_size=5, iterations=6))
    assert verdict.equal, verdict.describe()


def test_cli_exit_codes(images, converted, tmp_path):
    runner = CliRunner()
    ok = runner.invoke(main, ["verify", f"{CASE}::augment", "--set", f"root={images}", "--iterations", "3"])
    assert ok.exit_code == 0, ok.output
    assert "equivalent" in ok.output
    bad = tmp_path / "bad.py"
    bad.write_text(converted.read_text().replace("std=[60.0, 60.0, 60.0]", "std=[60.0, 61.0, 60.0]"))
    diff = runner.invoke(main, ["verify", f"{CASE}::augment", "--against", str(bad), "--set", f"root={images}", "--iterations", "3"])
    assert diff.exit_code == 1, diff.output
    assert "iteration 0, output 0, sample 0: values differ" in diff.output
    assert "CropMirrorNormalize" in diff.output
    missing = runner.invoke(main, ["verify", f"{CASE}::nope"])
    assert missing.exit_code == 2 and "no top-level definition of nope" in missing.output
    broken = runner.invoke(main, ["verify", f"{CASE}::augment", "--set", "root=/no/such/dir", "--iterations", "1"])
    assert broken.exit_code == 2 and "cannot build the original pipeline" in broken.output


def test_tolerance(images, converted, tmp_path):
    bad = tmp_path / "tol.py"
    bad.write_text(converted.read_text().replace("mean=[120.0, 115.0, 100.0]", "mean=[120.0001, 115.0, 100.0]"))
    exact = verify(Options(original=CASE, name="augment", against=bad, params={"root": images}, iterations=2))
    assert not exact.equal and exact.mismatch.max_abs_diff < 1e-4
    loose = verify(Options(original=CASE, name="augment", against=bad, params={"root": images}, iterations=2, atol=1e-4))
    assert loose.equal, loose.describe()


def test_top_level_code_is_not_run():
    sliced = slice_source(CASE.read_text(), ["augment"])
    assert "SystemExit" not in sliced and "pipe.build()" not in sliced
    assert len(sliced.splitlines()) == len(CASE.read_text().splitlines())  # line numbers kept
    assert "CROP = 24" in sliced and "import nvidia.dali.fn as fn" in sliced


def test_unconvertible_pipeline_is_an_error(tmp_path):
    src = tmp_path / "p.py"
    src.write_text(
        "import nvidia.dali.fn as fn\nfrom nvidia.dali import pipeline_def\n"
        "@pipeline_def(batch_size=2)\ndef p():\n    return fn.dl_tensor_python_function(fn.random.uniform(), function=abs)\n"
    )
    with pytest.raises(VerifyError, match="not converted automatically"):
        verify(Options(original=src))


def test_a_pipeline_defined_under_a_module_level_if_is_found(tmp_path):
    # `if dali_enable:` around the definitions (ziplab/QTool): the slice keeps the block and the
    # try that binds the flag, and blanks the rest
    from dali_migrate.verify.slicing import slice_source

    src = (
        "try:\n    import nvidia.dali.fn as fn\n    ok = True\nexcept ImportError:\n    ok = False\n\n"
        "if ok:\n    def pipe():\n        return fn.constant(idata=[1])\nelse:\n    pipe = None\n\n"
        "print('top-level code')\n"
    )
    out = slice_source(src, ["pipe"])
    assert "def pipe():" in out and "ok = True" in out
    assert "print(" not in out and out.count("\n") == src.count("\n")


def test_a_class_computing_its_seed_from_the_device_id_is_checked_on_the_cpu(images):
    # super().__init__(batch_size, num_threads, device_id, seed=12 + device_id): the class needs an
    # integer, a pipeline on the CPU needs device_id=None; verify gives the Pipeline None
    case = Path(__file__).parent / "verify_cases" / "hybrid_class.py"
    params = {"batch_size": 4, "num_threads": 1, "device_id": 0, "data_dir": images, "crop": 16}
    verdict = verify(Options(original=case, name="HybridTrainPipe", params=params))
    assert verdict.equal, verdict.describe()
    assert verdict.outputs == 2


@pytest.mark.parametrize("seed", [0, 3])
def test_a_class_whose_seed_parameter_is_its_readers_is_checked(images, seed):
    # the converted function's setting is pipeline_seed (the base class's 7); `seed` stays the
    # reader's: random crop and coin flip from the one, the shuffle from the other
    case = Path(__file__).parent / "verify_cases" / "seed_param_class.py"
    assert "pipeline_seed=7" in convert_source(case.read_text()).output
    verdict = verify(Options(original=case, name="TrainPipe", params={"batch_size": 3, "root": images, "seed": seed},
                             iterations=10))
    assert verdict.equal, verdict.describe()
    assert verdict.outputs == 3
