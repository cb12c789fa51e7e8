"""torch-iterator: a pipeline made with a batch size that would run twice (``batch_size=
batch_size_for(args, mode)``, a call of the file's) gets it bound once, right before the statement that makes it, where
that keeps Python's order; elsewhere the iterator keeps its marker."""

import argparse
import importlib.util
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from dali_migrate.device_cpu import to_cpu
from dali_migrate.engine import convert_source

HEADER = """\
import argparse
from nvidia.dali import fn, pipeline_def
from nvidia.dali.plugin.pytorch import DALIClassificationIterator, DALIGenericIterator, LastBatchPolicy


@pipeline_def(num_threads=2, device_id=0)
def pipe_fn(root, shard_id=0, num_shards=1):
    jpegs, labels = fn.readers.file(file_root=root, shard_id=shard_id, num_shards=num_shards, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed")
    images = fn.resize(images, resize_x=8, resize_y=8)
    return images, labels.gpu()


"""

TWICE = "the pipeline's batch size is an expression that would run twice"
CHOICE = 'batch_size_for(args, mode)'


def run(body: str):
    result = convert_source(HEADER + textwrap.dedent(body))
    return result.output, [m.reason for m in result.markers]


def test_the_batch_size_is_bound_once_before_the_pipeline_and_read_by_both():
    out, reasons = run(f"""
        def get_loader(args, mode):
            # one pipeline per split
            pipe = pipe_fn(batch_size={CHOICE},
                           num_threads=args.workers,
                           root=args.data)  # the split's folder
            pipe.build()
            return DALIClassificationIterator(pipe, reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL)
    """)
    assert reasons == []
    assert (
        "    # one pipeline per split\n"
        f"    batch_size_2 = {CHOICE}\n"
        "    pipe = pipe_fn(batch_size=batch_size_2,\n"
    ) in out
    assert "root=args.data)  # the split's folder\n" in out
    assert 'DaliTorchIterator(pipe, ["data", "label"], batch_size=batch_size_2, reader_meta=' in out
    assert out.count(CHOICE) == 1


def test_each_pipeline_gets_its_own_name_and_every_iterator_over_one_reads_the_same():
    out, reasons = run(f"""
        def get_loaders(args, mode):
            train = pipe_fn(batch_size={CHOICE}, root=args.train)
            val = pipe_fn(batch_size=batch_size_for(args, "val"), root=args.val)
            first = DALIGenericIterator(train, ["x", "y"], reader_name="Reader")
            again = DALIGenericIterator(train, ["x", "y"], reader_name="Reader")
            return first, again, DALIGenericIterator(val, ["x", "y"], reader_name="Reader")
    """)
    assert reasons == []
    assert f"    batch_size_2 = {CHOICE}\n    train = pipe_fn(batch_size=batch_size_2, " in out
    assert "    batch_size_3 = batch_size_for(args, \"val\")\n    val = pipe_fn(batch_size=batch_size_3, " in out
    assert out.count("batch_size=batch_size_2, reader_meta=") == 2 and out.count("batch_size=batch_size_3, reader_meta=") == 1


def test_a_batch_size_written_as_a_name_or_constant_is_not_bound_again():
    for size in ("args.batch", "64", "batch_size"):
        out, reasons = run(f"""
            def get_loader(args, batch_size):
                pipe = pipe_fn(batch_size={size}, root=args.data)
                return DALIClassificationIterator(pipe, reader_name="Reader")
        """)
        assert reasons == []
        assert f"pipe = pipe_fn(batch_size={size}, root=args.data)" in out
        assert f"batch_size={size}, reader_meta=" in out and "batch_size_2" not in out


def test_a_module_level_script_and_a_pipeline_kept_on_self_in_the_same_method_convert():
    out, reasons = run(f"""
        args = argparse.ArgumentParser().parse_args()
        mode = "train"
        pipe = pipe_fn(batch_size={CHOICE}, root=args.data)
        pipe.build()
        loader = DALIClassificationIterator(pipe, reader_name="Reader")
    """)
    assert reasons == [] and f"\nbatch_size_2 = {CHOICE}\npipe = pipe_fn(batch_size=batch_size_2, " in out
    out, reasons = run(f"""
        class Data:
            def __init__(self, args, mode):
                self.pipe = pipe_fn(batch_size={CHOICE}, root=args.data)
                self.loader = DALIClassificationIterator(self.pipe, reader_name="Reader")
    """)
    assert reasons == [] and f"        batch_size_2 = {CHOICE}\n        self.pipe = pipe_fn(batch_size=batch_size_2, " in out


# Where the expression cannot move before the statement, or the iterator could not read the
# name, the iterator keeps the marker it had.
REFUSED = {
    # something the call evaluates before it (a name, an attribute read) would then come after it
    "after another argument": f"pipe = pipe_fn(args.data, batch_size={CHOICE})",
    "after a keyword argument": f"pipe = pipe_fn(root=args.data, batch_size={CHOICE})",
    # `n = 1;` would run after it
    "second on its line": f"n = 1; pipe = pipe_fn(batch_size={CHOICE}, root=args.data)",
    "one-line if": f"if args: pipe = pipe_fn(batch_size={CHOICE}, root=args.data)",
    # the walrus binds a name the call's other arguments could read
    "walrus": f"pipe = pipe_fn(batch_size=(bs := {CHOICE}), root=args.data)",
    "a comprehension's list": f"pipe = [pipe_fn(batch_size={CHOICE}, root=args.data, device_id=i) for i in range(2)]",
}


@pytest.mark.parametrize("key", sorted(REFUSED))
def test_refused_where_the_order_or_the_scope_would_change(key):
    out, reasons = run(f"""
        def get_loader(args, mode):
            {REFUSED[key]}
            return DALIClassificationIterator(pipe, reader_name="Reader")
    """)
    assert any(TWICE in r for r in reasons), reasons
    assert "batch_size_2" not in out and "@pipeline_def" in out


def test_refused_for_a_pipeline_made_inside_the_iterators_call():
    out, reasons = run(f"""
        def get_loader(args, mode):
            return DALIClassificationIterator(pipe_fn(batch_size={CHOICE}, root=args.data), reader_name="Reader")
    """)
    assert any(TWICE in r for r in reasons) and "batch_size_2" not in out


def test_refused_in_a_class_body_and_for_the_decorators_own_batch_size():
    # a class body's names live in a namespace its metaclass may give
    out, reasons = run(f"""
        class Loader:
            args = argparse.ArgumentParser().parse_args()
            mode = "train"
            pipe = pipe_fn(batch_size={CHOICE}, root=args.data)
            loader = DALIClassificationIterator(pipe, reader_name="Reader")
    """)
    assert any(TWICE in r for r in reasons) and "batch_size_2" not in out
    # evaluated once, where the function is decorated: there is no statement to bind it before
    result = convert_source(HEADER.replace("@pipeline_def(num_threads=2", "@pipeline_def(batch_size=sizes(), num_threads=2")
                            + "def get_loader(root):\n    pipe = pipe_fn(root)\n"
                              "    return DALIClassificationIterator(pipe, reader_name='Reader')\n")
    assert any(TWICE in m.reason for m in result.markers) and "batch_size_2" not in result.output


def test_refused_where_a_function_of_the_file_makes_the_pipeline():
    out, reasons = run(f"""
        def make(args, mode):
            pipe = pipe_fn(batch_size={CHOICE}, root=args.data)
            return pipe

        def get_loader(args, mode):
            pipe = make(args, mode)
            return DALIClassificationIterator(pipe, reader_name="Reader")
    """)
    assert any(TWICE in r for r in reasons) and "batch_size_2" not in out


def test_refused_over_several_pipelines():
    # each would get a name of its own, and DALI asserts that their batch sizes are equal
    out, reasons = run(f"""
        def get_loader(args, mode):
            pipe0 = pipe_fn(batch_size={CHOICE}, root=args.data, shard_id=0, num_shards=2, device_id=0)
            pipe1 = pipe_fn(batch_size={CHOICE}, root=args.data, shard_id=1, num_shards=2, device_id=1)
            return DALIGenericIterator([pipe0, pipe1], ["x", "y"], reader_name="Reader")
    """)
    assert any(TWICE in r for r in reasons) and "batch_size_2" not in out


# -- run on the CPU: the converted loaders give DALI's iterator's batches ----------------------------


def _load(tmp_path, name, source):
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"_bs_bound_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _epochs(loader, n):
    seen = []
    for _ in range(n):
        for data in loader:
            seen.append((data[0]["data"], data[0]["label"]))
        seen.append(("len", len(loader)))
        loader.reset()
    return seen


def _same(want, got):
    import torch

    assert len(want) == len(got)
    for x, y in zip(want, got):
        if isinstance(x[0], torch.Tensor):
            assert all(a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b) for a, b in zip(x, y))
        else:
            assert x == y


def _runnable():
    pytest.importorskip("torch")
    pytest.importorskip("nvidia.dali.plugin.pytorch")
    return pytest.importorskip("nvidia.dali.experimental.dynamic")


def test_the_golden_cases_loaders_give_each_split_its_batch_size(tmp_path, fixture_data):
    ndd = _runnable()
    golden = Path(__file__).resolve().parent.parent / "golden"
    name = "torch_iterator_batch_size_by_split"
    original = _load(tmp_path, "original", to_cpu((golden / f"{name}.py").read_text()))
    converted = _load(tmp_path, "converted", to_cpu((golden / f"{name}.expected.py").read_text()))
    data = tmp_path / "data"
    data.mkdir()
    for split in ("train", "val"):
        (data / split).symlink_to(fixture_data / "images", target_is_directory=True)
    args = argparse.Namespace(data=str(data), batch_size=4, val_batch_size=8, workers=ndd.get_num_threads(),
                              size=64, crop=48, local_rank=0, world_size=1)
    for split, batch in (("train", 4), ("val", 8)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = _epochs(original.get_loader(args, split), 2)
        got = _epochs(converted.get_loader(args, split), 2)
        assert want[0][0].shape[0] == batch  # each split's own batch size
        _same(want, got)


def test_a_batch_size_with_an_effect_runs_once_and_the_iterator_gets_its_value(tmp_path, fixture_data):
    ndd = _runnable()
    source = HEADER.replace("num_threads=2", f"num_threads={ndd.get_num_threads()}") + textwrap.dedent("""
        def get_loader(root, sizes):
            pipe = pipe_fn(batch_size=sizes.pop(0), root=root)
            pipe.build()
            return DALIClassificationIterator(pipe, reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL)
    """)
    result = convert_source(source)
    assert not result.markers and "batch_size_2 = sizes.pop(0)" in result.output
    original = _load(tmp_path, "original_pop", to_cpu(source))
    converted = _load(tmp_path, "converted_pop", to_cpu(result.output))
    root = str(fixture_data / "images")
    want_sizes, got_sizes = [8, 4], [8, 4]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _epochs(original.get_loader(root, want_sizes), 2)
    got = _epochs(converted.get_loader(root, got_sizes), 2)
    assert want_sizes == got_sizes == [4] and want[0][0].shape[0] == 8
    _same(want, got)


def test_a_conditional_expression_of_names_and_attributes_is_written_again_not_bound():
    # (its parts are repeatable, so it is: it evaluates some of them, as `a or b` does)
    out, reasons = run("""
        def get_loader(args, mode):
            pipe = pipe_fn(batch_size=args.batch if mode == "train" else args.val_batch, root=args.data)
            pipe.build()
            return DALIClassificationIterator(pipe, reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL)
    """)
    assert reasons == []
    assert "batch_size_2" not in out
    assert 'DaliTorchIterator(pipe, ["data", "label"], batch_size=args.batch if mode == "train" else args.val_batch, ' in out


# A batch size written again at the iterator reads its names there: where the code may assign one
# of them between the pipeline's statement and the iterator, the value is bound once instead.
CHANGED = {
    "a name": ("bs", "bs = 2"),
    "a conditional expression's test": ('args.batch if mode == "train" else args.val_batch', 'mode = "val"'),
    "an attribute": ("args.batch", "args.batch = 2"),
}


@pytest.mark.parametrize("key", sorted(CHANGED))
def test_a_batch_size_whose_names_change_before_the_iterator_is_bound_once(key):
    size, change = CHANGED[key]
    out, reasons = run(f"""
        def get_loader(args, mode, bs):
            pipe = pipe_fn(batch_size={size}, root=args.data)
            {change}
            return DALIClassificationIterator(pipe, reader_name="Reader")
    """)
    assert reasons == []
    assert f"    batch_size_2 = {size}\n    pipe = pipe_fn(batch_size=batch_size_2, root=args.data)\n" in out
    assert 'DaliTorchIterator(pipe, ["data", "label"], batch_size=batch_size_2, ' in out


def test_a_loop_that_changes_the_batch_size_after_the_pipeline_is_made_binds_it():
    out, reasons = run("""
        def get_loaders(args, bs):
            pipe = pipe_fn(batch_size=bs, root=args.data)
            loaders = []
            for bs in (1, 2):
                loaders.append(DALIClassificationIterator(pipe, reader_name="Reader"))
            return loaders
    """)
    assert reasons == [] and "    batch_size_2 = bs\n" in out and "batch_size=batch_size_2, reader_meta=" in out
    # a loop that makes the pipeline again with each value: the iterator reads the one it was made with
    out, reasons = run("""
        def get_loaders(args, sizes):
            loaders = []
            for bs in sizes:
                pipe = pipe_fn(batch_size=bs, root=args.data)
                loaders.append(DALIClassificationIterator(pipe, reader_name="Reader"))
            return loaders
    """)
    assert reasons == [] and "batch_size_2" not in out and "batch_size=bs, reader_meta=" in out


def test_a_changed_batch_size_that_cannot_be_bound_keeps_the_marker():
    out, reasons = run("""
        def get_loader(args, bs):
            pipe = pipe_fn(args.data, batch_size=bs)
            bs = 2
            return DALIClassificationIterator(pipe, reader_name="Reader")
    """)
    assert any("reads `bs`, which may be assigned again before the iterator" in r for r in reasons), reasons
    assert "batch_size_2" not in out and "@pipeline_def" in out


def test_the_bound_statement_gets_the_argument_as_other_rules_rewrote_it():
    # `first.epoch_size(...)` of a converted pipeline: left as written, it would call a generator's epoch_size
    out, reasons = run("""
        def get_loader(args, min_size):
            first = pipe_fn(batch_size=8, root=args.data)
            pipe = pipe_fn(batch_size=min_size(first.epoch_size("Reader")), root=args.data)
            a = DALIClassificationIterator(pipe, reader_name="Reader")
            b = DALIClassificationIterator(pipe, reader_name="Reader")
            return a, b
    """)
    assert reasons == []
    assert "epoch_size(" not in out
    assert ('    batch_size_2 = min_size(ndd.readers.File(file_root=args.data, shard_id=0, num_shards=1)'
            '.get_metadata()["epoch_size_padded"])\n') in out


def test_a_batch_size_assigned_again_after_the_pipeline_gives_the_iterator_the_first_value(tmp_path, fixture_data):
    ndd = _runnable()
    source = HEADER.replace("num_threads=2", f"num_threads={ndd.get_num_threads()}") + textwrap.dedent("""
        def get_loader(root, bs):
            pipe = pipe_fn(batch_size=bs, root=root)
            pipe.build()
            bs = 3
            return DALIClassificationIterator(pipe, reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL)
    """)
    result = convert_source(source)
    assert not result.markers and "batch_size_2 = bs" in result.output
    original = _load(tmp_path, "original_rebound", to_cpu(source))
    converted = _load(tmp_path, "converted_rebound", to_cpu(result.output))
    root = str(fixture_data / "images")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _epochs(original.get_loader(root, 8), 2)
    got = _epochs(converted.get_loader(root, 8), 2)
    assert want[0][0].shape[0] == 8
    _same(want, got)


def test_an_iterator_whose_other_arguments_are_rewritten_reads_the_bound_name():
    # (the rule sees the iterator's call with `pipe.epoch_size(...)` already rewritten: it once raised)
    out, reasons = run(f"""
        def get_loader(args, mode):
            pipe = pipe_fn(batch_size={CHOICE}, root=args.data)
            pipe.build()
            return DALIClassificationIterator(pipe, size=pipe.epoch_size("Reader"))
    """)
    assert reasons == [] and f"    batch_size_2 = {CHOICE}\n" in out
    assert 'DaliTorchIterator(pipe, ["data", "label"], batch_size=batch_size_2, size=ndd.readers.File(' in out
