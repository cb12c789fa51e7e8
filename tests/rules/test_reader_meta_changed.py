"""The reader an iterator's ``reader_meta=`` / ``pipe.epoch_size()`` writes again at its use reads what
the pipeline's reader read: where a name its arguments read may change in between (an assignment,
a store to ``args.data``, a loop around the use, ``global``), or where it copies a parameter's
default or a decorator's setting that is evaluated once, where the pipeline function is defined,
and whose names the code may assign afterwards, the use keeps a marker instead."""

import importlib.util
import sys
import textwrap
import warnings

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


def run(body: str, header: str = HEADER):
    result = convert_source(header + textwrap.dedent(body))
    return result.output, [m.reason for m in result.markers]


def _marked(out, reasons, name, use="the iterator"):
    assert any(f"reads `{name}`, which may be assigned again before {use}" in r for r in reasons), reasons
    assert "reader_meta=" not in out and "ndd.readers." not in out


# -- 1. a name the reader's arguments read changes between the pipeline and its use ------------------

CHANGED = {
    "assigned": """
        def get_loader(root):
            pipe = pipe_fn(batch_size=8, root=root)
            root = "/data/val"
            return DALIGenericIterator(pipe, ["x", "y"], reader_name="Reader")
    """,
    "attribute": """
        def get_loader(args):
            pipe = pipe_fn(batch_size=8, root=args.data)
            args.data = "/data/val"
            return DALIGenericIterator(pipe, ["x", "y"], reader_name="Reader")
    """,
    "holder": """
        def get_loader(args):
            pipe = pipe_fn(batch_size=8, root=args.paths.train)
            args.paths = argparse.Namespace(train="/data/val")
            return DALIGenericIterator(pipe, ["x", "y"], reader_name="Reader")
    """,
    "loop": """
        def get_loaders(root, roots):
            pipe = pipe_fn(batch_size=8, root=root)
            loaders = []
            for root in roots:
                loaders.append(DALIGenericIterator(pipe, ["x", "y"], reader_name="Reader"))
            return loaders
    """,
    "global": """
        ROOT = "/data/train"

        def switch():
            global ROOT
            ROOT = "/data/val"

        def get_loader():
            pipe = pipe_fn(batch_size=8, root=ROOT)
            switch()
            return DALIGenericIterator(pipe, ["x", "y"], reader_name="Reader")
    """,
}
CHANGED_NAME = {"assigned": "root", "attribute": "args", "holder": "args", "loop": "root", "global": "ROOT"}


@pytest.mark.parametrize("key", sorted(CHANGED))
def test_a_reader_argument_changed_before_the_iterator_is_marked(key):
    out, reasons = run(CHANGED[key])
    _marked(out, reasons, CHANGED_NAME[key])


def test_a_reader_argument_changed_before_epoch_size_is_marked():
    out, reasons = run("""
        def steps(root):
            pipe = pipe_fn(batch_size=8, root=root)
            pipe.build()
            root = "/data/val"
            return pipe.epoch_size("Reader") // 8
    """)
    _marked(out, reasons, "root", use="pipe.epoch_size()")


def test_the_jax_and_paddle_iterators_are_marked_alike():
    for module in ("jax", "paddle"):
        header = HEADER.replace("nvidia.dali.plugin.pytorch", f"nvidia.dali.plugin.{module}")
        if module == "jax":
            header = header.replace("DALIClassificationIterator, ", "")
        out, reasons = run("""
            def get_loader(args):
                pipe = pipe_fn(batch_size=8, root=args.data)
                args.data = "/data/val"
                return DALIGenericIterator([pipe], ["x", "y"], reader_name="Reader")
        """, header)
        _marked(out, reasons, "args")


def test_a_pipeline_a_function_of_the_file_makes_is_marked_alike():
    out, reasons = run("""
        def make(args):
            return pipe_fn(batch_size=8, root=args.data)

        def get_loader(args):
            pipe = make(args)
            args.data = "/data/val"
            return DALIGenericIterator(pipe, ["x", "y"], reader_name="Reader")
    """)
    _marked(out, reasons, "args")


def test_the_iterable_of_a_list_of_pipelines_changed_before_the_iterator_is_marked():
    out, reasons = run("""
        def get_loader(root, n):
            pipes = [pipe_fn(batch_size=8, root=root, shard_id=i, num_shards=n, device_id=i) for i in range(n)]
            n = 1
            return DALIGenericIterator(pipes, ["x", "y"], reader_name="Reader")
    """)
    _marked(out, reasons, "n")


def test_what_does_not_change_still_converts():
    # stores before the pipeline, to another attribute, to the comprehension's own variable, and a
    # loop that makes the pipeline again each time: the reader written again reads the same values
    out, reasons = run("""
        def get_loaders(args, roots, n):
            args.data = args.data.rstrip("/")
            pipe = pipe_fn(batch_size=8, root=args.data)
            args.other = 1
            first = DALIGenericIterator(pipe, ["x", "y"], reader_name="Reader")
            loaders = []
            for root in roots:
                p = pipe_fn(batch_size=8, root=root)
                loaders.append(DALIGenericIterator(p, ["x", "y"], reader_name="Reader"))
            pipes = [pipe_fn(batch_size=8, root=args.data, shard_id=i, num_shards=n, device_id=i) for i in range(n)]
            for i in range(2):
                pass
            multi = DALIGenericIterator(pipes, ["x", "y"], reader_name="Reader")
            return first, loaders, multi, pipe.epoch_size("Reader")
    """)
    assert reasons == []
    assert out.count("get_metadata()") == 4


# -- 2. a default or a setting is evaluated where the pipeline function is defined ------------------

DEFAULTS = HEADER.replace("def pipe_fn(root, shard_id=0, num_shards=1)", "def pipe_fn(root, shard_id=RANK, num_shards=WORLD)")


def _default_marked(out, reasons, name):
    assert any(f"`{name}`" in r and "where the pipeline function is defined" in r for r in reasons), reasons
    assert "reader_meta=" not in out and "ndd.readers." not in out


def test_a_default_whose_global_a_function_assigns_is_marked():
    out, reasons = run("""
        def set_rank(rank):
            global RANK
            RANK = rank

        def get_loader(root):
            pipe = pipe_fn(batch_size=8, root=root)
            return DALIGenericIterator(pipe, ["x", "y"], reader_name="Reader")
    """, "RANK, WORLD = 0, 1\n" + DEFAULTS)
    _default_marked(out, reasons, "RANK")


def test_a_default_assigned_again_at_module_level_is_marked():
    out, reasons = run("""
        WORLD = 2

        def steps(root):
            pipe = pipe_fn(batch_size=8, root=root)
            return pipe.epoch_size("Reader")
    """, "RANK = 0\nWORLD = 1\n" + DEFAULTS)
    _default_marked(out, reasons, "WORLD")


def test_a_default_of_a_factorys_pipeline_is_marked_alike():
    out, reasons = run("""
        WORLD = 2

        def make(root):
            return pipe_fn(batch_size=8, root=root)

        def get_loader(root):
            pipe = make(root)
            return DALIGenericIterator(pipe, ["x", "y"], reader_name="Reader")
    """, "RANK = 0\nWORLD = 1\n" + DEFAULTS)
    _default_marked(out, reasons, "WORLD")


def test_defaults_that_cannot_change_still_convert():
    out, reasons = run("""
        def get_loader(root):
            pipe = pipe_fn(batch_size=8, root=root)
            return DALIGenericIterator(pipe, ["x", "y"], reader_name="Reader")
    """, "import os\nRANK = int(os.environ.get('RANK', '0'))\nWORLD = 1\n" + DEFAULTS)
    assert reasons == []
    assert "num_shards=WORLD).get_metadata()" in out and "shard_id=RANK" in out


def test_a_decorators_batch_size_assigned_again_is_marked():
    header = HEADER.replace("@pipeline_def(num_threads=2", "BS = 8\n\n\n@pipeline_def(batch_size=BS, num_threads=2")
    out, reasons = run("""
        BS = 16

        def get_loader(root):
            pipe = pipe_fn(root)
            return DALIGenericIterator(pipe, ["x", "y"], reader_name="Reader")
    """, header)
    assert any("`BS`" in r and "where the pipeline function is defined" in r for r in reasons), reasons
    assert "DaliTorchIterator" not in out
    # assigned once, it converts as before
    out, reasons = run("""
        def get_loader(root):
            pipe = pipe_fn(root)
            return DALIGenericIterator(pipe, ["x", "y"], reader_name="Reader")
    """, header)
    assert reasons == [] and "batch_size=BS, reader_meta=" in out


# -- on the CPU: what the old conversion gave differs from DALI's iterator ---------------------------


def _load(tmp_path, name, source):
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"_reader_meta_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _runnable():
    pytest.importorskip("torch")
    pytest.importorskip("nvidia.dali.plugin.pytorch")
    return pytest.importorskip("nvidia.dali.experimental.dynamic")


def _lengths(loader, epochs=2):
    seen = []
    for _ in range(epochs):
        seen.append(sum(int(data[0]["data"].shape[0]) for data in loader))
        seen.append(len(loader))
        loader.reset()
    return seen


def _old_and_new(source: str, change: str, at: str, converted_at: str = ""):
    """(the source with ``change`` inserted before ``at``, what the codemod gave for it before this
    check: its output for the source without the change, the change inserted at the same place
    (``converted_at`` there), which is the statement that code leaves as it is)."""
    converted_at = converted_at or at
    without = convert_source(source)
    assert not without.markers and "reader_meta=" in without.output
    assert source.count(at) == 1 and without.output.count(converted_at) == 1
    return source.replace(at, change + at), without.output.replace(converted_at, change + converted_at)


def test_a_reader_argument_assigned_again_made_the_old_conversion_read_another_folder(tmp_path, fixture_data):
    ndd = _runnable()
    header = HEADER.replace("num_threads=2", f"num_threads={ndd.get_num_threads()}")
    source = header + textwrap.dedent("""
        def get_loader(root, other):
            pipe = pipe_fn(batch_size=4, root=root)
            pipe.build()
            return DALIClassificationIterator(pipe, reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL)
    """)
    source, old = _old_and_new(source, "root = other\n    ", "return DALIClassificationIterator", "return DaliTorchIterator")
    _marked(*run(source[len(header):], header), "root")
    original = _load(tmp_path, "original_root", to_cpu(source))
    converted = _load(tmp_path, "old_root", to_cpu(old))
    root, other = fixture_data / "images", tmp_path / "other"
    (other / "circle").mkdir(parents=True)
    for image in sorted((root / "circle").iterdir())[:2]:
        (other / "circle" / image.name).write_bytes(image.read_bytes())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _lengths(original.get_loader(str(root), str(other)))
    got = _lengths(converted.get_loader(str(root), str(other)))
    assert want[0] == len([p for p in root.rglob("*") if p.is_file()])
    assert got != want  # the old conversion's epoch is that of the other folder


def test_a_default_assigned_again_made_the_old_conversion_read_another_shard_count(tmp_path, fixture_data):
    ndd = _runnable()
    header = "WORLD = 1\n" + HEADER.replace("num_threads=2", f"num_threads={ndd.get_num_threads()}").replace(
        "num_shards=1)", "num_shards=WORLD)")
    source = header + textwrap.dedent("""
        def get_loader(root):
            pipe = pipe_fn(batch_size=4, root=root)
            pipe.build()
            return DALIClassificationIterator(pipe, reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL)
    """)
    source, old = _old_and_new(source, "WORLD = 2\n\n\n", "def get_loader")
    _default_marked(*run(source[len(header):], header), "WORLD")
    original = _load(tmp_path, "original_world", to_cpu(source))
    converted = _load(tmp_path, "old_world", to_cpu(old))
    root = str(fixture_data / "images")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _lengths(original.get_loader(root))
    got = _lengths(converted.get_loader(root))
    assert want[0] == 21 and got != want  # the old conversion's epoch is half the data set


def test_a_pipeline_function_defined_where_it_is_made_reads_its_settings_there():
    # its decorator runs where it is defined: a name changed between there and the pipeline's call
    # would be read anew by the iterator; unchanged, it converts
    body = """
        def get_loader(root, bs):
            @pipeline_def(batch_size=bs, num_threads=2, device_id=0)
            def local_pipe(path):
                jpegs, labels = fn.readers.file(file_root=path, name="Reader")
                return jpegs, labels
            {change}pipe = local_pipe(root)
            return DALIGenericIterator(pipe, ["x", "y"], reader_name="Reader")
    """
    out, reasons = run(body.format(change="bs = 2\n            "))
    assert any("`bs`" in r and "where the pipeline function is defined" in r for r in reasons), reasons
    assert "DaliTorchIterator" not in out
    out, reasons = run(body.format(change=""))
    assert reasons == [] and "batch_size=bs, reader_meta=" in out


def test_a_module_level_pipeline_whose_default_is_bound_again_only_after_its_use_converts():
    # (a notebook: `batch_size = 200` in the first cell and again in a later one, the iterator made
    # at module level in between: nothing rebinds it from the def to the iterator)
    out, reasons = run("""
        pipe = pipe_fn(batch_size=8, root="data")
        it = DALIGenericIterator(pipe, ["x", "y"], reader_name="Reader")
        WORLD = 1
    """, "RANK = 0\nWORLD = 1\n" + DEFAULTS)
    assert reasons == []
    assert "reader_meta=ndd.readers.File(" in out


def test_a_module_level_pipeline_whose_default_is_bound_again_before_it_is_made_is_marked():
    out, reasons = run("""
        WORLD = 2
        pipe = pipe_fn(batch_size=8, root="data")
        it = DALIGenericIterator(pipe, ["x", "y"], reader_name="Reader")
    """, "RANK = 0\nWORLD = 1\n" + DEFAULTS)
    _default_marked(out, reasons, "WORLD")
