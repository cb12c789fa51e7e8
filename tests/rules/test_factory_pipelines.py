"""Pipelines a function of the file makes and returns (``pipe = create_dali_pipeline(...)``, a
``with pipe:`` graph or a ``@pipeline_def`` call inside): the rules that need the arguments the
pipeline was made with (an iterator's batch size and reader, ``pipe.epoch_size()``,
``pipe.device_id``) follow the factory's parameters to what its call gives them
(call_sites.in_caller), or leave a marker saying what they could not follow."""
import importlib.util
import os
import sys
import types as pytypes
import warnings
from pathlib import Path

import pytest

from _helpers import convert

HEADER = (
    "import os\nimport nvidia.dali.fn as fn\nfrom nvidia.dali import pipeline_def\nfrom nvidia.dali.pipeline import Pipeline\n"
    "from nvidia.dali.plugin.pytorch import DALIGenericIterator\n"
)
FACTORY = (
    "def make(data_dir, batch_size, shard_id=0, num_shards=1, seed=12):\n"
    "    pipe = Pipeline(batch_size, 2, 0, seed=seed)\n"
    "    with pipe:\n"
    "        jpegs, labels = fn.readers.file(file_root=data_dir, shard_id=shard_id, num_shards=num_shards, name='Reader')\n"
    "        pipe.set_outputs(fn.decoders.image(jpegs), labels)\n"
    "    return pipe\n\n"
)
LOADER = "def loader(root):\n    pipe = make(root, 8)\n    pipe.build()\n    return DALIGenericIterator([pipe], ['x', 'y'], reader_name='Reader')\n"
CONVERTED = "return DaliTorchIterator(pipe, ['x', 'y'], batch_size=8, reader_meta=ndd.readers.File(file_root=root, shard_id=0, num_shards=1).get_metadata())"


def _convert(src: str) -> str:
    return convert(src, header=HEADER)


def test_iterator_over_a_factory_pipeline_gets_the_call_arguments_and_the_defaults():
    out = _convert(FACTORY + LOADER)
    assert "# dali-migrate" not in out and "pipe.build()" not in out
    # positional arguments for data_dir and batch_size, the literal defaults for the shard
    assert CONVERTED in out
    # the factory returns the converted generator
    assert "    pipe = pipe_batches()\n    return pipe\n" in out


def test_seed_and_settings_come_from_the_factory_call():
    out = _convert(FACTORY + LOADER.replace("make(root, 8)", "make(batch_size=8, seed=3 + 4, data_dir=root)"))
    assert "# dali-migrate" not in out
    assert "def pipe_batches(*, batch_size=batch_size, num_threads=2, device_id=0, seed=seed):" in out
    assert "make(batch_size=8, seed=3 + 4, data_dir=root)" in out and CONVERTED in out


def test_setting_the_graph_reads_is_the_factory_parameter():
    # one shard per GPU: the graph reads the factory's device_id, also the pipeline's setting
    src = FACTORY.replace("shard_id=0, num_shards=1, seed=12", "device_id, num_gpus").replace("Pipeline(batch_size, 2, 0, seed=seed)", "Pipeline(batch_size, 2, device_id, seed=12 + device_id)")
    src = src.replace("shard_id=shard_id, num_shards=num_shards", "shard_id=device_id, num_shards=num_gpus")
    out = _convert(src + LOADER.replace("loader(root)", "loader(root, rank)").replace("make(root, 8)", "make(root, 8, rank, 4)"))
    assert "# dali-migrate" not in out and "def pipe_batches(*, batch_size=batch_size, num_threads=2, device_id=device_id, seed=12 + device_id):" in out
    assert "reader_meta=ndd.readers.File(file_root=root, shard_id=rank, num_shards=4).get_metadata()" in out


def test_a_comparison_given_for_a_flag_is_evaluated_again():
    # Paddle's ResNet example: is_training=mode == Mode.TRAIN
    src = FACTORY.replace("seed=12):", "seed=12, is_training=True):").replace("name='Reader')", "pad_last_batch=is_training, name='Reader')")
    out = _convert(src + LOADER.replace("loader(root)", "loader(root, mode)").replace("make(root, 8)", "make(root, 8, is_training=mode == 'train')"))
    assert "reader_meta=ndd.readers.File(file_root=root, shard_id=0, num_shards=1, pad_last_batch=mode == 'train').get_metadata()" in out


def test_argument_expressions_keep_their_precedence():
    src = FACTORY.replace("shard_id=shard_id,", "shard_id=shard_id * 2,") + LOADER.replace("loader(root)", "loader(root, a, b)").replace("make(root, 8)", "make(root, 8, a + b)")
    out = _convert(src)
    assert "reader_meta=ndd.readers.File(file_root=root, shard_id=(a + b) * 2, num_shards=1).get_metadata()" in out


def test_factory_of_a_factory_and_epoch_size():
    src = FACTORY + (
        "def make_train(args):\n    return make(os.path.join(args.data, 'train'), args.batch_size, args.rank, args.world)\n\n"
        "def loader(args):\n    pipe = make_train(args)\n    pipe.build()\n    n = pipe.epoch_size('Reader')\n"
        "    return DALIGenericIterator([pipe], ['x', 'y'], reader_name='Reader'), n\n"
    )
    out = _convert(src)
    reader = "ndd.readers.File(file_root=os.path.join(args.data, 'train'), shard_id=args.rank, num_shards=args.world)"
    assert "# dali-migrate" not in out
    assert f"n = {reader}.get_metadata()[\"epoch_size_padded\"]" in out
    assert f"DaliTorchIterator(pipe, ['x', 'y'], batch_size=args.batch_size, reader_meta={reader}.get_metadata())" in out


PIPELINE_DEF = (
    "@pipeline_def(batch_size=4, num_threads=2, device_id=0)\ndef p(root, shard_id=0):\n"
    "    j, l = fn.readers.file(file_root=root, shard_id=shard_id, num_shards=2, name='R')\n    return j, l\n\n"
)


def test_pipeline_def_made_in_a_factory():
    src = PIPELINE_DEF + (
        "def make(path, bs, rank):\n    pipe = p(path, batch_size=bs, shard_id=rank)\n    return pipe\n\n"
        "def loader(args):\n    pipe = make(args.data, args.bs, 1)\n    print(pipe.device_id)\n"
        "    return DALIGenericIterator(pipe, ['x', 'y'], reader_name='R')\n"
    )
    out = _convert(src)
    assert "# dali-migrate" not in out
    # the decorator's device_id; the reader's shard from the factory's call
    assert "    print(0)\n" in out
    assert "DaliTorchIterator(pipe, ['x', 'y'], batch_size=args.bs, reader_meta=ndd.readers.File(file_root=args.data, shard_id=1, num_shards=2).get_metadata())" in out


def test_method_factory_called_on_self():
    src = PIPELINE_DEF + (
        "class Loader:\n    def __init__(self, root, bs):\n        self.root, self.bs = root, bs\n\n"
        "    def make_pipe(self, root):\n        pipe = p(root, batch_size=self.bs)\n        return pipe\n\n"
        "    def loader(self):\n        pipe = self.make_pipe(self.root)\n        return DALIGenericIterator(pipe, ['x', 'y'], reader_name='R')\n"
    )
    out = _convert(src)
    assert "# dali-migrate" not in out
    assert "DaliTorchIterator(pipe, ['x', 'y'], batch_size=self.bs, reader_meta=ndd.readers.File(file_root=self.root, shard_id=0, num_shards=2).get_metadata())" in out


def test_device_id_given_to_the_factory():
    src = PIPELINE_DEF + "def make(dev=1):\n    return p('d', device_id=dev)\n\npipe = make()\nprint(pipe.device_id)\npipe2 = make(dev=3)\nprint(pipe2.device_id)\n"
    out = _convert(src)
    assert "# dali-migrate" not in out and "print(1)\n" in out and "print(3)\n" in out


def test_global_read_by_the_factory_converts_where_the_caller_does_not_rebind_it():
    out = _convert("ROOT = 'r'\n" + FACTORY.replace("file_root=data_dir", "file_root=ROOT") + LOADER)
    assert "# dali-migrate" not in out and "reader_meta=ndd.readers.File(file_root=ROOT, shard_id=0, num_shards=1)" in out


def test_a_default_naming_a_module_constant_set_once_before_converts():
    # `num_shards=SHARDS`: bound once, before make() is defined; the iterator's reader reads it too
    out = _convert("NUM = 1\n" + FACTORY.replace("num_shards=1", "num_shards=NUM") + LOADER)
    assert "# dali-migrate" not in out and "num_shards=NUM).get_metadata()" in out, out


@pytest.mark.parametrize("after", ["    crop = 5\n", "    crop += 1\n", "    sizes.append(3)\n"])
def test_graph_reading_a_name_changed_after_it_is_defined_is_marked(after):
    # the generator reads the factory's names when it runs; the pipeline read them at definition
    src = FACTORY.replace("batch_size, shard_id=0", "batch_size, crop, sizes, shard_id=0").replace(
        "fn.decoders.image(jpegs)", "fn.resize(fn.decoders.image(jpegs), resize_x=crop, size=sizes)"
    ).replace("    return pipe\n", after + "    return pipe\n")
    out = _convert(src + LOADER.replace("make(root, 8)", "make(root, 8, 4, [1])"))
    name = "sizes" if "sizes" in after else "crop"
    assert "with pipe:" in out and f"the graph reads `{name}`, which make() assigns or changes after the graph is defined" in out


def test_graph_in_a_loop_reading_the_loop_variable_converts():
    # each pipeline is run in its own iteration: the variable is bound before each graph
    src = (
        "def main(root, n):\n    for i in range(n):\n        pipe = Pipeline(4, 2, 0, seed=1)\n        with pipe:\n"
        "            jpegs, labels = fn.readers.file(file_root=root, shard_id=i, num_shards=n)\n"
        "            pipe.set_outputs(fn.decoders.image(jpegs), labels)\n        pipe.build()\n        print(pipe.run())\n"
    )
    out = _convert(src)
    assert "# dali-migrate" not in out and "print(next(pipe))" in out


@pytest.mark.parametrize("factory, loader, reason", [
    (FACTORY.replace("    pipe = Pipeline", "    data_dir = os.path.join(data_dir, 'train')\n    pipe = Pipeline"), LOADER,
     "make() assigns its parameter `data_dir`, which the pipeline is made with"),
    (FACTORY.replace("    pipe = Pipeline", "    root = os.path.join(data_dir, 'train')\n    pipe = Pipeline").replace("file_root=data_dir", "file_root=root"), LOADER,
     "`root`, which the pipeline is made with, is computed inside make()"),
    (FACTORY, LOADER.replace("make(root, 8)", "make(get_root(), 8)"),
     "make() gets `get_root()` for `data_dir`, an expression that would run twice"),
    (FACTORY, LOADER.replace("make(root, 8)", "make(*root)"), "make() is called with *args/**kwargs"),
    (FACTORY, LOADER.replace("    pipe.build()\n", "    root = 'elsewhere'\n"), "`root`, given to make(), is assigned again after the call"),
    (FACTORY.replace("    return pipe\n", "    if seed is None:\n        return None\n    return pipe\n"), LOADER,
     "make() has 2 return statements (which pipeline a call of it gives cannot be told)"),
    # (the default was 1 when make() was defined; at the call NUM is 2)
    ("NUM = 1\n" + FACTORY.replace("num_shards=1", "num_shards=NUM") + "NUM = 2\n", LOADER,
     "the default of make()'s parameter `num_shards` is not a literal"),
    ("ROOT = 'r'\n" + FACTORY.replace("file_root=data_dir", "file_root=ROOT"), LOADER.replace("loader(root)", "loader(root, ROOT=None)"),
     "`ROOT`, which the pipeline is made with, names something else where make() is called"),
    # DALI's Paddle SSD example: one factory call per GPU in a comprehension
    (FACTORY, "def loader(root, n):\n    pipes = [make(root, 8, i, n) for i in range(n)]\n"
              "    return DALIGenericIterator(pipes, ['x', 'y'], reader_name='Reader')\n",
     "a list of pipelines is made by calling make(), a function that makes and returns one, in a comprehension "
     "(`pipes = [make(root, 8, i, n) for i in range(n)]`)"),
])
def test_what_cannot_be_followed_is_marked(factory, loader, reason):
    out = _convert(factory + loader)
    assert "with pipe:" in out and ("DALIGenericIterator([pipe]" in out or "DALIGenericIterator(pipes" in out)
    assert reason in out, out


# -- the golden cases' loaders, run: DALI's iterators against the converted code (CPU) ---------------

GOLDEN = Path(__file__).parent.parent / "golden"


def _load(tmp_path, name, source):
    from dali_migrate.device_cpu import to_cpu

    path = tmp_path / f"{name}.py"
    path.write_text(to_cpu(source))
    spec = importlib.util.spec_from_file_location(f"_factory_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _both(tmp_path, name):
    before = _load(tmp_path, f"{name}_before", (GOLDEN / f"{name}.py").read_text())
    after = _load(tmp_path, f"{name}_after", (GOLDEN / f"{name}.expected.py").read_text())
    return before, after


def _data_root(tmp_path, fixture_data) -> str:
    root = tmp_path / "imagenet"
    root.mkdir()
    for split in ("train", "val"):
        os.symlink(fixture_data / "images", root / split)
    return str(root)


def test_golden_torch_factory_loaders_give_the_same_epochs(tmp_path, fixture_data):
    torch = pytest.importorskip("torch")
    pytest.importorskip("nvidia.dali.plugin.pytorch")
    before, after = _both(tmp_path, "factory_with_pipe_torch_loaders")
    # shard 1 of 2 of 21 images (11) in batches of 4: PARTIAL cuts each epoch's last batch to 3
    args = pytypes.SimpleNamespace(data=_data_root(tmp_path, fixture_data), batch_size=4, workers=2, crop=64, size=80,
                                   dali_cpu=True, local_rank=1, world_size=2)

    def epochs(module):
        train, val = module.build_loaders(args)
        seen = []
        for _ in range(2):  # auto_reset
            seen.append(("train", len(train), [(b[0]["data"], b[0]["label"]) for b in train]))
            seen.append(("val", len(val), [(b[0]["data"], b[0]["label"]) for b in val]))
        return seen

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = epochs(before)
    got = epochs(after)
    assert [(k, n, len(e)) for k, n, e in want] == [(k, n, len(e)) for k, n, e in got]
    assert [len(e) for _, _, e in want] == [3, 3, 3, 3] and want[1][2][-1][1].shape[0] == 3
    for (kind, _, we), (_, _, ge) in zip(want, got):
        for wb, gb in zip(we, ge):
            for a, b in zip(wb, gb):
                assert a.dtype == b.dtype and a.shape == b.shape
                # the training pipeline shuffles and crops at random: its values differ by design
                if kind == "val":
                    assert torch.equal(a, b)


@pytest.fixture
def dali_paddle_on_cpu(monkeypatch):
    """DALI's Paddle iterator on a CPU build of Paddle (see tests/test_paddle_iterator.py)."""
    paddle = pytest.importorskip("paddle")
    pytest.importorskip("nvidia.dali.plugin.paddle")
    if not paddle.is_compiled_with_cuda():
        monkeypatch.setattr(paddle, "CUDAPlace", lambda device_id: None)
        monkeypatch.setattr(paddle.device.cuda, "current_stream", lambda device_id=None: pytypes.SimpleNamespace(cuda_stream=None))
    return paddle


def test_golden_paddle_factory_loaders_give_the_same_epochs(tmp_path, fixture_data, dali_paddle_on_cpu, monkeypatch):
    import numpy as np

    paddle = dali_paddle_on_cpu
    # the second of two trainers
    monkeypatch.setattr(paddle.distributed, "get_rank", lambda *a, **k: 1)
    monkeypatch.setattr(paddle.distributed, "get_world_size", lambda *a, **k: 2)
    before, after = _both(tmp_path, "factory_with_pipe_paddle_eval")
    args = pytypes.SimpleNamespace(data_dir=_data_root(tmp_path, fixture_data), batch_size=4, num_threads=2, crop_size=48, resize_short=64)

    def snap(batch):
        return [{k: (type(t), str(t._dtype()), list(t.shape()), t.lod(), np.array(t)) for k, t in b.items()} for b in batch]

    def epochs(module):
        seen = []
        for loader in (module.build_eval_loader(args, "gpu:0"), module.build_infer_loader(str(fixture_data / "images"), batch_size=8)):
            for _ in range(2):
                seen.append(("len", len(loader)))
                seen.extend(snap(b) for b in loader)
                loader.reset()
        return seen

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = epochs(before)
    got = epochs(after)
    assert len(want) == len(got) and sum(isinstance(x, list) for x in want) == 2 * 3 + 2 * 3
    for w, g in zip(want, got):
        if not isinstance(w, list):
            assert w == g
            continue
        for wb, gb in zip(w, g):
            assert list(wb) == list(gb)
            for k in wb:
                assert wb[k][:4] == gb[k][:4], (k, wb[k][:4], gb[k][:4])
                assert np.array_equal(wb[k][4], gb[k][4])
