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


def test_a_pipeline_whose_callers_give_its_batch_size_asks_for_one(images, tmp_path):
    src = tmp_path / "unsized.py"
    src.write_text("from nvidia.dali import pipeline_def, fn\n\n\n@pipeline_def\ndef pipe(root):\n"
                   "    jpegs, labels = fn.readers.file(file_root=root)\n    return labels\n\n\n"
                   "p = pipe('data', batch_size=8, num_threads=1, device_id=0)\n")
    out = CliRunner().invoke(main, ["verify", f"{src}::pipe", "--set", f"root={images}"])
    assert out.exit_code == 2 and "give one with --batch-size N" in out.output, out.output
    out = CliRunner().invoke(main, ["verify", f"{src}::pipe", "--set", f"root={images}", "--batch-size", "8"])
    assert out.exit_code == 0, out.output


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


def test_names_only_annotations_read_are_kept_by_the_slice():
    # da2so's video loader: `from typing import List` served only `def pipe(files: List[str])`
    src = (
        "from typing import List, Optional\nimport nvidia.dali.fn as fn\nfrom nvidia.dali import pipeline_def\n"
        "import os\nprint('top-level code')\n\n"
        "@pipeline_def(batch_size=2)\ndef pipe(files: List[str], n: 'int' = 1) -> Optional[int]:\n"
        "    return fn.readers.file(files=files)[0]\n"
    )
    out = slice_source(src, ["pipe"])
    assert "from typing import List, Optional" in out and "print(" not in out and "import os" not in out


def test_a_module_level_command_line_parse_gets_the_files_defaults(images, tmp_path):
    # Hurricane-nas: `args = parser.parse_args()` at module level, read by the pipeline; verify's
    # own options (`--iterations 3`) are not the file's
    src = tmp_path / "train.py"
    src.write_text(
        "import argparse\nimport nvidia.dali.fn as fn\nfrom nvidia.dali import pipeline_def\n"
        "parser = argparse.ArgumentParser()\nparser.add_argument('--crop', type=int, default=8)\n"
        "args = parser.parse_args()\n\n"
        "@pipeline_def(batch_size=2)\ndef p(root):\n"
        "    jpegs, labels = fn.readers.file(file_root=root)\n"
        "    return fn.resize(fn.decoders.image(jpegs), resize_x=args.crop, resize_y=args.crop), labels\n"
    )
    result = CliRunner().invoke(main, ["verify", str(src), "--iterations", "3", "--set", f"root={images}"])
    assert result.exit_code == 0, result.output
    required = tmp_path / "req.py"
    required.write_text(src.read_text().replace("'--crop', type=int, default=8", "'--crop', type=int, required=True"))
    with pytest.raises(VerifyError, match="exited .* while importing .*command line"):
        verify(Options(original=required, params={"root": images}))


def test_calls_of_imported_modules_at_the_top_level_stay_out_of_the_slice():
    src = (
        "import os\nimport nvidia.dali.fn as fn\nfrom nvidia.dali import pipeline_def\n"
        "os.makedirs('/data/of/the/author')\nCFG = {}\nCFG.update(crop=8)\n"
        "@pipeline_def(batch_size=2)\ndef pipe():\n    return fn.random.uniform(range=(0, CFG['crop']), shape=[2])\n"
    )
    out = slice_source(src, ["pipe"])
    assert "os.makedirs" not in out and "CFG.update(crop=8)" in out


def test_a_device_held_in_a_variable_moves_to_the_cpu(images, tmp_path):
    src = tmp_path / "held.py"
    src.write_text(
        "import nvidia.dali.fn as fn\nfrom nvidia.dali import pipeline_def\n\n"
        "@pipeline_def(batch_size=2)\ndef p(root, dali_cpu=False):\n"
        "    decoder_device = 'cpu' if dali_cpu else 'mixed'\n    dali_device = 'cpu' if dali_cpu else 'gpu'\n"
        "    jpegs, labels = fn.readers.file(file_root=root)\n"
        "    images = fn.decoders.image(jpegs, device=decoder_device)\n"
        "    return fn.resize(images, device=dali_device, resize_x=8, resize_y=8), labels\n"
    )
    verdict = verify(Options(original=src, params={"root": images}, iterations=3))
    assert verdict.equal


@pytest.mark.parametrize("shuffle", [False, True])
def test_a_pipeline_without_a_seed_is_checked_where_nothing_in_it_draws(images, tmp_path, shuffle):
    src = tmp_path / "noseed.py"
    src.write_text(
        "import nvidia.dali.ops as ops\nfrom nvidia.dali.pipeline import Pipeline\n\n"
        "class Plain(Pipeline):\n"
        "    def __init__(self, batch_size, num_threads, device_id, root):\n"
        "        super().__init__(batch_size, num_threads, device_id, seed=-1)\n"
        f"        self.input = ops.FileReader(file_root=root, random_shuffle={shuffle})\n"
        "        self.decode = ops.ImageDecoder(device='cpu')\n"
        "    def define_graph(self):\n"
        "        jpegs, labels = self.input()\n"
        "        return self.decode(jpegs), labels\n"
    )
    opts = Options(original=src, name="Plain", iterations=3,
                   params={"batch_size": 2, "num_threads": 1, "device_id": None, "root": images})
    if shuffle:
        with pytest.raises(VerifyError, match="without a fixed seed and with random operators or readers"):
            verify(opts)
    else:
        assert verify(opts).equal


class _Cursor:
    """An iterable that is its own iterator (xray-ai's CXRImageIterator): one object, one position."""

    def __init__(self, n=12, batch=2):
        self.n, self.batch, self.i = n, batch, 0

    def __iter__(self):
        self.i = 0
        return self

    def __next__(self):
        import numpy as np

        if self.i >= self.n:
            raise StopIteration
        out = [np.full((2, 2), self.i + k, dtype=np.uint8) for k in range(self.batch)]
        self.i += self.batch
        return out


def test_one_source_object_given_to_verify_serves_each_side_from_its_start(tmp_path):
    src = tmp_path / "cursor.py"
    src.write_text(
        "import nvidia.dali.fn as fn\nfrom nvidia.dali import pipeline_def\n\n"
        "@pipeline_def(batch_size=2)\ndef p(source):\n"
        "    return fn.external_source(source=source) * 2\n"
    )
    conv = tmp_path / "cursor_ndd.py"  # (converted by hand: the codemod cannot see what callers pass)
    conv.write_text(
        "import nvidia.dali.experimental.dynamic as ndd\n\n"
        "def p(source, **settings):\n"
        "    for data in source:\n"
        "        yield ndd.batch(data) * 2\n"
    )
    cursor = _Cursor()
    assert verify(Options(original=src, against=conv, params={"source": cursor}, iterations=4)).equal


def test_sources_drawing_from_numpys_global_generator_draw_the_same_on_each_side(tmp_path):
    # DALI's reinterpret notebook: sources call np.random directly. The original draws ahead for
    # its prefetch; with one global generator for both sides, the converted side got other numbers
    src = tmp_path / "global_rng.py"
    src.write_text(
        "import numpy as np\nimport nvidia.dali.fn as fn\nfrom nvidia.dali import pipeline_def\n\n"
        "np.random.seed(3)\n\n"
        "def sample(info):\n    return np.random.randint(0, 255, (2, 3), dtype=np.uint8)\n\n"
        "@pipeline_def(batch_size=2)\ndef p():\n"
        "    return fn.external_source(source=sample, batch=False) + 1\n"
    )
    verdict = verify(Options(original=src, iterations=4))
    assert verdict.equal, verdict.describe()


def test_a_pipeline_fed_from_outside_is_reported_not_waited_for(tmp_path):
    # DALI's zoo decode example: a blocking external source given by pipe.run(encoded_img=...)
    src = tmp_path / "fed.py"
    src.write_text(
        "import nvidia.dali.fn as fn\nfrom nvidia.dali import pipeline_def\n\n"
        "@pipeline_def(batch_size=1)\ndef decode_pipeline(source_name):\n"
        "    encoded = fn.external_source(name=source_name, blocking=True, no_copy=False)\n"
        "    return fn.decoders.image(encoded)\n"
    )
    conv = tmp_path / "fed_ndd.py"
    conv.write_text("def decode_pipeline(source_name, **settings):\n    yield from ()\n")
    with pytest.raises(VerifyError, match=r"reads input fed from outside \('encoded_img'"):
        verify(Options(original=src, against=conv, params={"source_name": "encoded_img"}))


_ENDING = (
    "import numpy as np\nimport nvidia.dali.fn as fn\nfrom nvidia.dali import pipeline_def\n\n"
    "class Batches:\n"
    "    def __init__(self, n):\n        self.n, self.i = n, 0\n"
    "    def __call__(self, iteration):\n"
    "        if self.i >= self.n:\n            self.i = 0\n            raise StopIteration\n"
    "        self.i += 1\n"
    "        return [np.full((2,), self.i * 10 + k, dtype=np.int32) for k in range(2)]\n\n"
    "@pipeline_def(batch_size=2)\ndef p(source):\n"
    "    return fn.external_source(source=source) + 1\n"
)


def _ending_case(tmp_path, converted_loop: str, n=3, iterations=6):
    import importlib.util

    src = tmp_path / "ending.py"
    src.write_text(_ENDING)
    spec = importlib.util.spec_from_file_location("ending_src", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    conv = tmp_path / "ending_ndd.py"  # (by hand: the codemod cannot see what callers pass)
    conv.write_text(
        "import itertools\nimport nvidia.dali.experimental.dynamic as ndd\n\n"
        "def p(source, **settings):\n" + converted_loop
    )
    return verify(Options(original=src, against=conv, params={"source": mod.Batches(n)}, iterations=iterations))


def test_a_source_that_runs_out_ends_both_sides_at_the_same_iteration(tmp_path):
    # DALI raises StopIteration from run() when a source runs out; the converted generator ends
    verdict = _ending_case(tmp_path, "    for data in map(source, itertools.count()):\n        yield ndd.batch(data) + 1\n")
    assert verdict.equal, verdict.describe()
    assert verdict.iterations == 3
    assert "ended after 3 iteration(s)" in verdict.describe()


def test_converted_code_that_goes_on_after_the_source_ran_out_is_a_difference(tmp_path):
    verdict = _ending_case(tmp_path, (
        "    for it in itertools.count():\n"
        "        try:\n            data = source(it)\n        except StopIteration:\n            data = source(it)\n"
        "        yield ndd.batch(data) + 1\n"
    ))
    assert not verdict.equal
    assert verdict.mismatch.what == "end of data" and verdict.mismatch.iteration == 3
    assert "gave another batch" in verdict.describe()


def test_converted_code_that_ends_before_the_source_runs_out_is_a_difference(tmp_path):
    verdict = _ending_case(tmp_path, (
        "    for data in itertools.islice(map(source, itertools.count()), 2):\n        yield ndd.batch(data) + 1\n"
    ))
    assert not verdict.equal
    assert verdict.mismatch.what == "end of data" and verdict.mismatch.iteration == 2
    assert verdict.describe().startswith("NOT equivalent: iteration 2: the converted code ended")


def test_a_restartable_conversion_ends_where_it_yields_none(tmp_path):
    # where the pipeline object could be reset (a framework iterator drives it), the converted
    # generator yields None at the source's end instead of returning
    verdict = _ending_case(tmp_path, (
        "    draws = map(source, itertools.count())\n"
        "    while True:\n"
        "        data = next(draws, None)\n"
        "        if data is None:\n"
        "            yield None  # the source's end\n"
        "            continue\n"
        "        yield ndd.batch(data) + 1\n"
    ))
    assert verdict.equal, verdict.describe()
    assert "yielded None" in verdict.describe()
    early = _ending_case(tmp_path, "    yield ndd.batch(source(0)) + 1\n    yield None\n")
    assert not early.equal and early.mismatch.iteration == 1
    assert "it yielded None" in early.describe()
