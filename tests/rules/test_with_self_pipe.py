"""`self.pipe = Pipeline(...)` + `with self.pipe:` + `self.pipe.set_outputs(...)` in a method (MLPerf's
SSD loader, NeMo's audio loaders): the graph becomes a function defined there, `self.pipe` holds
its generator, and reads of `self.<attr>` in the graph are taken where the graph was defined
(legacy.rewrite_with_blocks, _snapshot_attributes)."""
import warnings
from pathlib import Path

import pytest

from _helpers import convert, run_both
from _modules import load_source

HEADER = (
    "import nvidia.dali.fn as fn\nimport nvidia.dali.types as types\nfrom nvidia.dali.pipeline import Pipeline\n"
    "from nvidia.dali.plugin.pytorch import DALIGenericIterator\n"
)
GOLDEN = Path(__file__).parent.parent / "golden"

LOADER = '''
class Loader:
    def __init__(self, root, batch_size, scale=2.0):
        self.scale = scale
        self.pipe = Pipeline(batch_size=batch_size, num_threads=1, device_id=None)
        with self.pipe:
            jpegs, labels = fn.readers.file(file_root=root, name="Reader")
            images = fn.decoders.image(jpegs, device="cpu")
            images = fn.resize(images, resize_x=8, resize_y=8)
            self.pipe.set_outputs(fn.cast(images, dtype=types.FLOAT) * self.scale, labels)
        self.pipe.build()

    def batches(self, n):
        return [self.pipe.run() for _ in range(n)]
'''


def test_the_graph_becomes_a_function_and_self_pipe_its_generator():
    out = convert(LOADER, header=HEADER)
    assert "dali-migrate:" not in out
    assert ("        def pipe_batches(self_scale=self.scale, *, batch_size=batch_size, num_threads=1, device_id=None, "
            "seed=None):") in out
    assert "ndd.cast(images, dtype=types.FLOAT) * self_scale" in out
    assert "        self.pipe = pipe_batches()\n" in out
    assert "return [next(self.pipe) for _ in range(n)]" in out


def test_an_attribute_set_after_the_graph_is_defined_is_not_seen_by_it(tmp_path, fixture_data):
    # the pipeline read self.scale once, when its graph was defined; the converted loop runs
    # every iteration, and must still use that value
    pytest.importorskip("nvidia.dali")
    import numpy as np

    src = HEADER + LOADER + '''

def run(root):
    loader = Loader(root, 4)
    first = loader.batches(1)
    loader.scale = 100.0
    return first + loader.batches(3)
'''
    out = convert(src, header="")
    assert "dali-migrate:" not in out and "self_scale=self.scale" in out
    root = str(fixture_data / "images")
    want, got = run_both(tmp_path, src, out, "run", root)
    assert len(want) == len(got) == 4
    for w, g in zip(want, got):
        for a, b in zip(w, g):
            a = [np.array(a[i]) for i in range(len(a))]
            b = [np.array(b.select(i)) for i in range(b.batch_size)]
            assert all(x.dtype == y.dtype and np.array_equal(x, y) for x, y in zip(a, b))
    assert float(np.array(got[3][0].select(0)).max()) <= 2 * 255  # (scaled by 2.0, not 100)


@pytest.mark.parametrize("extra, why", [
    # the object the graph reads may be changed in place later: the snapshot would not see that
    ("    def grow(self):\n        self.scale.append(1)\n", "the graph reads `self`"),
    # a method of self called by the graph would run when the loop does
    (None, "`self.factor()`, which dali-migrate cannot see into"),
])
def test_reads_of_self_that_cannot_be_taken_once_keep_the_pipeline(extra, why):
    src = LOADER + (extra or "")
    if extra is None:
        src = src.replace("* self.scale", "* self.factor()") + "    def factor(self):\n        return self.scale\n"
    out = convert(src, header=HEADER)
    assert "with self.pipe:" in out and why in out


def test_statements_between_pipeline_and_with_are_seen_by_the_snapshot():
    src = LOADER.replace("        with self.pipe:\n", "        self.scale = self.scale + 1\n        with self.pipe:\n")
    out = convert(src, header=HEADER)
    assert "dali-migrate:" not in out
    # defined after them, where the graph was: self.scale already has its new value
    assert out.index("self.scale = self.scale + 1") < out.index("def pipe_batches(self_scale=self.scale")


def test_statements_between_that_change_self_before_a_pipeline_reading_it_keep_the_pipeline():
    src = LOADER.replace("Pipeline(batch_size=batch_size,", "Pipeline(batch_size=self.bs,").replace(
        "        self.scale = scale\n", "        self.scale = scale\n        self.bs = batch_size\n").replace(
        "        with self.pipe:\n", "        self.scale = self.scale + 1\n        with self.pipe:\n")
    out = convert(src, header=HEADER)
    assert "with self.pipe:" in out and "the graph reads `self`" in out


def test_golden_loader_gives_the_same_epochs(tmp_path, fixture_data):
    torch = pytest.importorskip("torch")
    pytest.importorskip("nvidia.dali.plugin.pytorch")
    from dali_migrate.device_cpu import to_cpu

    root = str(fixture_data / "images")

    def epochs(name, source):
        module = load_source(tmp_path, name, to_cpu(source))
        loader = module.DaliDataIterator(root, batch_size=4, num_threads=2, shard_id=1, num_shards=2,
                                         is_training=False, device_id=None)
        return [len(loader)] + [list(loader) for _ in range(3)]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = epochs("before", (GOLDEN / "with_self_pipe_loader.py").read_text())
    got = epochs("after", (GOLDEN / "with_self_pipe_loader.expected.py").read_text())
    assert want[0] == got[0]
    assert [len(e) for e in want[1:]] == [len(e) for e in got[1:]] and len(want[1]) >= 2
    for we, ge in zip(want[1:], got[1:]):
        for (wi, wt), (gi, gt) in zip(we, ge):
            assert torch.equal(wi, gi)
            assert all(torch.equal(wt[k], gt[k]) for k in wt)


def test_attributes_a_source_s_lambda_reads_are_not_taken_once():
    # the lambda reads self.values when the pipeline calls it, every iteration: that stays so
    src = LOADER.replace(
        '            jpegs, labels = fn.readers.file(file_root=root, name="Reader")\n',
        '            jpegs, labels = fn.readers.file(file_root=root, name="Reader")\n'
        '            extra = fn.external_source(source=lambda info: self.values[info.idx_in_epoch % 2], batch=False)\n',
    ).replace("* self.scale, labels)", "* self.scale, labels, extra)")
    out = convert(src, header=HEADER)
    assert "self_scale" not in out and "self_values" not in out


LOCAL = LOADER.replace("self.pipe", "pipe").replace(
    "        pipe.build()\n", "        pipe.build()\n        self.it = DALIGenericIterator([pipe], ['x', 'y'], reader_name='Reader')\n"
).replace("return [pipe.run() for _ in range(n)]", "return [next(self.it)[0] for _ in range(n)]")


def test_a_graph_made_in_a_method_in_a_variable_takes_self_once_too():
    # `pipe = Pipeline(...)`, `with pipe:` in __init__, reading self.scale, then `self.pipe = pipe`
    # (or an iterator over it kept on self): self changes after the graph, its reads are taken there
    out = convert(LOCAL, header=HEADER)
    assert "dali-migrate:" not in out
    assert "def pipe_batches(self_scale=self.scale, *," in out and "* self_scale" in out


def test_a_graph_made_in_a_method_in_a_variable_gives_the_same_batches(tmp_path, fixture_data):
    torch = pytest.importorskip("torch")
    pytest.importorskip("nvidia.dali.plugin.pytorch")

    src = HEADER + LOCAL + '''

def run(root):
    loader = Loader(root, 4)
    first = loader.batches(1)
    loader.scale = 100.0
    return first + loader.batches(4)
'''
    out = convert(src, header="")
    assert "dali-migrate:" not in out and "self_scale=self.scale" in out
    root = str(fixture_data / "images")
    want, got = run_both(tmp_path, src, out, "run", root)
    assert len(want) == len(got) == 5
    for w, g in zip(want, got):
        assert w.keys() == g.keys() and all(torch.equal(w[k], g[k]) for k in w)
    assert float(got[-1]["x"].max()) <= 2 * 255  # (scaled by 2.0, not 100)


def test_a_static_method_s_first_parameter_is_no_instance():
    src = LOCAL.replace("    def __init__(self, root, batch_size, scale=2.0):",
                        "    @staticmethod\n    def make(self, root, batch_size, scale=2.0):")
    out = convert(src, header=HEADER)
    assert "self_scale" not in out
