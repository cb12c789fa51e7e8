import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dali_migrate import catalog

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def cat():
    return catalog.load()


def test_loads_without_dali_numpy_or_torch():
    # The codemod must work where DALI is absent (pre-commit envs): block the heavy packages
    # outright, so any import of them raises, and check none got imported on the way.
    code = textwrap.dedent(
        """
        import sys
        for name in ("nvidia", "numpy", "torch"):
            sys.modules[name] = None
        import dali_migrate.catalog as c
        cat = c.load()
        assert cat.fn("readers.file").ndd_name == "readers.File"
        assert len(cat.all()) > 100
        assert c.load() is cat
        leaked = [m for m in sys.modules if m.split(".")[0] in ("nvidia", "numpy", "torch")
                  and sys.modules[m] is not None]
        assert not leaked, leaked
        print("ok")
        """
    )
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "ok"


def test_header(cat):
    data = json.loads((ROOT / "dali_migrate" / "data" / "catalog.json").read_text())
    assert data["generated_by"] == "python scripts/generate_catalog.py"
    assert cat.dali_version == data["dali_version"]


def test_reader(cat):
    info = cat.fn("readers.file")
    assert (info.schema, info.ops_name, info.ndd_name) == ("readers__File", "readers.File", "readers.File")
    assert info.is_reader and info.reader_class == "File"
    assert info.takes_seed and not info.is_random  # seeds shuffling, not an rng= op
    assert "file_root" in info.args and info.devices == ("cpu",)
    assert info.num_outputs == 2


def test_deprecated_reader_alias(cat):
    info = cat.fn("file_reader")
    assert info.deprecated and info.deprecated_alias_of == "readers.file"
    assert info.is_reader and info.reader_class == "File" and info.ndd_name == "readers.File"


@pytest.mark.parametrize(
    "fn_name",
    ["random.uniform", "noise.gaussian", "random_resized_crop", "decoders.image_random_crop",
     "coin_flip", "random.coin_flip"],
)
def test_random(cat, fn_name):
    info = cat.fn(fn_name)
    assert info.is_random and info.takes_seed


def test_not_random(cat):
    flip = cat.fn("flip")
    assert not flip.is_random and not flip.takes_seed and flip.ndd_name == "flip"


@pytest.mark.parametrize(
    "fn_name, target",
    [("image_decoder", "decoders.image"), ("uniform", "random.uniform"),
     ("coin_flip", "random.coin_flip")],
)
def test_deprecated_aliases(cat, fn_name, target):
    info = cat.fn(fn_name)
    assert info.deprecated and info.deprecated_alias_of == target
    assert info.ndd_name == cat.fn(target).ndd_name


@pytest.mark.parametrize(
    "fn_name, ndd_name",
    [("experimental.equalize", "equalize"), ("experimental.decoders.video", "decoders.video")],
)
def test_moved_from_experimental(cat, fn_name, ndd_name):
    info = cat.fn(fn_name)
    assert info.ndd_name == ndd_name and info.moved_from_experimental


def test_experimental_still_experimental(cat):
    info = cat.fn("experimental.median_blur")
    assert info.ndd_name == "experimental.median_blur" and not info.moved_from_experimental


def test_no_ndd_counterpart(cat):
    assert cat.fn("python_function").ndd_name is None
    # Deprecated in favour of an op with different arguments: not a safe rename.
    ssd = cat.fn("ssd_random_crop")
    assert ssd.replaced_by == "random_bbox_crop" and ssd.deprecated_alias_of is None


def test_ops_lookup(cat):
    assert cat.ops("FileReader").fn_name == "file_reader"
    assert cat.ops("readers.File").fn_name == "readers.file"
    assert cat.ops("CoinFlip").fn_name == "coin_flip"
    assert cat.ops("random.CoinFlip").fn_name == "random.coin_flip"
    assert cat.ops("NoSuchOp") is None and cat.fn("no_such_op") is None


def test_consistency(cat):
    for info in cat.all():
        assert set(info.devices) <= {"cpu", "gpu", "mixed"}, info
        assert list(info.args) == sorted(info.args), info
        assert 0 <= info.min_inputs <= info.max_inputs, info
        if info.deprecated_alias_of is not None:
            assert cat.fn(info.deprecated_alias_of) is not None, info
        if info.is_random:
            assert not info.is_reader, info
        if info.num_outputs is not None:
            assert info.default_num_outputs == info.num_outputs and not info.num_outputs_args, info


def test_output_count_depends_on_arguments(cat):
    resize = cat.fn("resize")
    assert resize.num_outputs is None
    assert (resize.default_num_outputs, resize.num_outputs_args) == (1, (("save_attrs", False),))
    # Its count follows the number of inputs (labels are optional): no default count.
    assert cat.fn("bbox_rotate").default_num_outputs is None


@pytest.mark.parametrize(
    "fn_name, inputs, kwargs",
    [("resize", 1, {"resize_x": 4}), ("segmentation.random_object_bbox", 1, {}),
     ("readers.coco", 0, {"file_root": "r", "annotations_file": "a.json"})],
)
def test_default_output_count_is_what_dali_builds(cat, fn_name, inputs, kwargs):
    """The catalog's counts against the DataNodes DALI's fn API gives (a graph only, nothing runs)."""
    pytest.importorskip("nvidia.dali")
    from nvidia.dali import Pipeline, backend, fn

    info = cat.fn(fn_name)

    def outputs(**extra) -> int:
        with Pipeline(batch_size=1, num_threads=1, device_id=None):
            args = [fn.external_source(name=f"in{i}") for i in range(inputs)]
            out = _resolve(fn, fn_name)(*args, **{**kwargs, **extra})
        return len(out) if isinstance(out, (list, tuple)) else 1

    assert info.num_outputs is None and outputs() == info.default_num_outputs
    # A deprecated name (coco's `masks`) warns and stands for its replacement, checked on its own.
    schema = backend.GetSchema(info.schema)
    flags = [(name, default) for name, default in info.num_outputs_args
             if isinstance(default, bool) and not schema.IsDeprecatedArg(name)]
    assert flags, info
    for name, default in flags:
        assert outputs(**{name: default}) == info.default_num_outputs, name
        assert outputs(**{name: not default}) != info.default_num_outputs, name


def _resolve(root, dotted):
    for part in dotted.split("."):
        root = getattr(root, part)
    return root


def test_committed_catalog_matches_installed_dali():
    pytest.importorskip("nvidia.dali")
    pytest.importorskip("nvidia.dali.experimental.dynamic")
    res = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "generate_catalog.py"), "--check"],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert res.returncode == 0, res.stdout + res.stderr
