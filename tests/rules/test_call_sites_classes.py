"""Pipelines kept in a class: a method that returns one (called as ``self.m()``), or an attribute
``self.<name>`` assigned one. Converted only when the file shows every way the method or
attribute is reached (call_sites.py, "classes")."""
import importlib.util
import sys
import types as pytypes
import warnings
from pathlib import Path

import pytest

from _helpers import convert

PIPE = '@pipeline_def(batch_size=4)\ndef p(root):\n    j, l = fn.readers.file(file_root=root, name="R")\n    return j, l\n\n'
FOLLOW_MARK = "used here in a way dali-migrate cannot follow"

METHOD = (
    "class Loader:\n"
    "    def __init__(self, root):\n        self.root = root\n\n"
    "    def make(self):\n        pipe = p(self.root)\n        return pipe\n\n"
    "    def first(self):\n        pipe = self.make()\n        pipe.build()\n        j, l = pipe.run()\n        return l.as_array()\n"
)


def test_method_factory_called_on_self_converts():
    out = convert(PIPE + METHOD)
    assert "@pipeline_def" not in out and "# dali-migrate" not in out
    assert "        j, l = next(pipe)\n        return np.array(ndd.as_tensor(l))\n" in out
    assert "pipe.build()" not in out


def test_method_returning_the_pipeline_call_itself_converts():
    out = convert(PIPE + METHOD.replace("        pipe = p(self.root)\n        return pipe\n", "        return p(self.root)\n"))
    assert "@pipeline_def" not in out and "# dali-migrate" not in out and "next(pipe)" in out


def test_module_function_returning_the_pipeline_call_converts():
    out = convert(PIPE + "def make(root):\n    return p(root)\n\npipe = make('d')\npipe.build()\nprint(pipe.run())\n")
    assert "@pipeline_def" not in out and "print(next(pipe))" in out


@pytest.mark.parametrize("extra", [
    "\nloader = Loader('d')\nmaker = loader.make\n",  # reached from outside the class
    "\nclass Other(Loader):\n    def make(self):\n        return None\n",  # overridden by a subclass
    "\nm = getattr(Loader('d'), 'make')\n",  # named in a string
])
def test_method_factory_reached_otherwise_stays(extra):
    out = convert(PIPE + METHOD + extra)
    assert "@pipeline_def" in out and "pipe.run()" in out and "# dali-migrate" in out


@pytest.mark.parametrize("caller", [
    "        self.a, self.b = 1, 2\n",  # a tuple of attributes: `self` stays the same object
    "        (self.a, [self.b, *self.c]) = 1, [2, 3]\n",
])
def test_method_factory_called_by_a_method_setting_attributes_by_unpacking_converts(caller):
    out = convert(PIPE + METHOD.replace("        pipe = self.make()\n", caller + "        pipe = self.make()\n"))
    assert "@pipeline_def" not in out and "# dali-migrate" not in out and "next(pipe)" in out


@pytest.mark.parametrize("caller", [
    "        self, other = Loader('e'), 1\n",  # `self` itself rebound: self.make() is another object's
    "        for self in [Loader('e')]:\n            pass\n",
])
def test_method_factory_called_after_self_is_rebound_stays(caller):
    out = convert(PIPE + METHOD.replace("        pipe = self.make()\n", caller + "        pipe = self.make()\n"))
    assert "@pipeline_def" in out and "# dali-migrate" in out


def test_decorated_method_factory_stays():
    out = convert(PIPE + METHOD.replace("    def make(self):", "    @staticmethod\n    def make(self):"))
    assert "@pipeline_def" in out and "the pipeline object `pipe` is used by `return pipe` in a way dali-migrate cannot follow" in out


STORED = (
    "class DataModule:\n"
    "    def setup(self):\n        self.pipe = p('d')\n        self.pipe.build()\n\n"
    "    def epoch(self):\n        for _ in range(3):\n            j, l = self.pipe.run()\n            print(l.at(0))\n"
)


def test_pipeline_stored_on_self_converts_in_every_method():
    out = convert(PIPE + STORED)
    assert "@pipeline_def" not in out and "# dali-migrate" not in out
    assert "self.pipe = p('d')\n\n" in out
    assert "j, l = next(self.pipe)\n            print(np.array(l.select(0)))" in out


def test_iterator_over_stored_pipeline_gets_its_arguments_where_it_is_made():
    out = convert(
        PIPE + "from nvidia.dali.plugin.pytorch import DALIGenericIterator\n"
        "class DM:\n    def setup(self, root):\n        self.pipe = p(root)\n"
        "        self.loader = DALIGenericIterator(self.pipe, ['a', 'b'], reader_name='R')\n"
        "    def train_dataloader(self):\n        return self.loader\n"
    )
    assert "# dali-migrate" not in out
    assert "self.loader = DaliTorchIterator(self.pipe, ['a', 'b'], batch_size=4, reader_meta=ndd.readers.File(file_root=root).get_metadata())" in out


@pytest.mark.parametrize("extra, reason", [
    ("\ndm = DataModule()\ndm.pipe.run()\n", "on something other than `self`"),
    ("\ndm = DataModule()\ndm.pipe = None\n", "on something other than `self`"),
    ("\nclass Other(DataModule):\n    pass\n", "derives from DataModule"),
    ("\nsetattr(DataModule(), 'pi' + 'pe', None)\n", "setattr() with a computed name"),
])
def test_stored_pipeline_reached_from_elsewhere_stays(extra, reason):
    out = convert(PIPE + STORED + extra)
    assert "@pipeline_def" in out and "self.pipe.run()" in out and reason in out


@pytest.mark.parametrize("method, reason", [
    ("    def teardown(self):\n        self.pipe = None\n", "`self.pipe` also holds something other than the pipeline p"),
    ("    def other(self):\n        return self.pipe\n", "the pipeline object `self.pipe` is used by `return self.pipe` in a way dali-migrate cannot follow"),
    ("    def other(self):\n        f = lambda: self.pipe.run()\n", "on something other than `self` in a method"),
    ("    def other(self):\n        self.pipe.serialize()\n", "self.pipe.serialize() has no automatic dynamic-mode conversion"),
])
def test_stored_pipeline_with_a_use_not_converted_stays(method, reason):
    out = convert(PIPE + STORED + method)
    assert "@pipeline_def" in out and "self.pipe.run()" in out and reason in out


def test_class_level_attribute_of_the_same_name_stays():
    out = convert(PIPE + STORED.replace("class DataModule:\n", "class DataModule:\n    pipe = None\n\n"))
    assert "@pipeline_def" in out and "defines `pipe` at class level" in out


def test_attribute_assigned_two_pipelines_stays():
    src = PIPE + PIPE.replace("def p", "def q") + STORED + "    def val(self):\n        self.pipe = q('e')\n"
    out = convert(src)
    assert out.count("@pipeline_def") == 2 and "also holds something other than the pipeline" in out


# -- the golden classes, run: pipeline mode against dynamic mode (CPU) ------------------------------

GOLDEN = Path(__file__).parent.parent / "golden"


def _load(tmp_path, name, source):
    from dali_migrate.device_cpu import to_cpu

    path = tmp_path / f"{name}.py"
    path.write_text(to_cpu(source))
    spec = importlib.util.spec_from_file_location(f"_classes_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _both(tmp_path, name):
    before = _load(tmp_path, f"{name}_before", (GOLDEN / f"{name}.py").read_text())
    after = _load(tmp_path, f"{name}_after", (GOLDEN / f"{name}.expected.py").read_text())
    return before, after


def test_golden_loader_class_gives_the_same_batches(tmp_path, fixture_data):
    pytest.importorskip("nvidia.dali")
    import numpy as np

    before, after = _both(tmp_path, "pipeline_built_by_method")
    root = str(fixture_data / "images")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = [before.Loader(root, 4, device_id=None).first_batch(), *before.Loader(root, 4, device_id=None).batches(7)]
    got = [after.Loader(root, 4, device_id=None).first_batch(), *after.Loader(root, 4, device_id=None).batches(7)]
    assert len(want) == len(got) == 8
    for w, g in zip(want, got):
        for a, b in zip(w, g):
            assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


def test_golden_datamodule_gives_the_same_epochs(tmp_path, fixture_data, monkeypatch):
    torch = pytest.importorskip("torch")
    pytest.importorskip("nvidia.dali.plugin.pytorch")
    # Lightning is not installed here; the DataModule only needs a base class to derive from.
    lightning = pytypes.ModuleType("pytorch_lightning")
    lightning.LightningDataModule = type("LightningDataModule", (), {})
    monkeypatch.setitem(sys.modules, "pytorch_lightning", lightning)
    before, after = _both(tmp_path, "pipeline_stored_on_datamodule")
    root = str(fixture_data / "images")

    def epochs(module):
        dm = module.ImageDataModule(root, root, batch_size=4, device_id=None)
        dm.setup("fit")
        got = []
        for loader in (dm.train_dataloader(), dm.val_dataloader(), dm.train_dataloader()):
            got.append([(b[0]["data"], b[0]["label"]) for b in loader])
        return got

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = epochs(before)
    got = epochs(after)
    assert [len(e) for e in want] == [len(e) for e in got] == [6, 6, 6]
    for we, ge in zip(want, got):
        for wb, gb in zip(we, ge):
            for a, b in zip(wb, gb):
                assert a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
