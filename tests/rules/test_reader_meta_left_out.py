"""The reader an iterator's ``reader_meta=`` / ``pipe.epoch_size()`` writes again keeps only the
arguments that may change its metadata: the loader arguments that cannot (shuffling, seed,
prefetching, ...; tests/test_reader_meta_args.py proves which on DALI) are left out, so a name only
they read neither is evaluated again nor blocks the use."""

import textwrap

import libcst as cst

from dali_migrate.engine import convert_source
from dali_migrate.rules.pipe_epoch_size import _meta_free_kwargs

HEADER = """\
from nvidia.dali import fn, pipeline_def
from nvidia.dali.plugin.pytorch import DALIGenericIterator


@pipeline_def(num_threads=2, device_id=0)
def pipe_fn(root, shard_id=0, num_shards=1, shuffle=True, fill=1024):
    jpegs, labels = fn.readers.file(file_root=root, shard_id=shard_id, num_shards=num_shards, random_shuffle=shuffle,
                                    initial_fill=fill, read_ahead=True, lazy_init=True, dont_use_mmap=True,
                                    prefetch_queue_depth=2, pad_last_batch=True, stick_to_shard=True, name="Reader")
    return jpegs, labels


"""


def run(body: str, header: str = HEADER):
    result = convert_source(header + textwrap.dedent(body))
    return result.output, [m.reason for m in result.markers]


def test_only_the_metadata_arguments_are_written_again():
    out, reasons = run("""
        def get_loader(args):
            pipe = pipe_fn(batch_size=8, root=args.data, shard_id=args.rank, num_shards=args.world, shuffle=args.train,
                           fill=args.fill)
            steps = pipe.epoch_size("Reader") // 8
            return DALIGenericIterator(pipe, ["x", "y"], reader_name="Reader"), steps
    """)
    assert reasons == [], reasons
    reader = ("ndd.readers.File(file_root=args.data, shard_id=args.rank, num_shards=args.world, pad_last_batch=True, "
              "stick_to_shard=True).get_metadata()")
    assert f"reader_meta={reader}" in out
    assert f"steps = {reader}[\"epoch_size_padded\"] // 8" in out
    # the generator's own reader keeps them all
    generator_reader = out[out.index("reader = ndd.readers.File("):out.index("seed=seed_or_random)")]
    for kept in ("random_shuffle=shuffle", "initial_fill=fill", "read_ahead=True", "lazy_init=True",
                 "dont_use_mmap=True", "prefetch_queue_depth=2"):
        assert kept in generator_reader


def test_a_name_only_a_left_out_argument_reads_may_change_before_the_use():
    out, reasons = run("""
        def get_loader(args, fill):
            pipe = pipe_fn(batch_size=8, root=args.data, fill=fill, shuffle=args.train)
            fill = 16
            args.train = False
            return DALIGenericIterator(pipe, ["x", "y"], reader_name="Reader")
    """)
    assert reasons == [], reasons
    assert "reader_meta=ndd.readers.File(file_root=args.data, shard_id=0, num_shards=1, pad_last_batch=True, stick_to_shard=True)" in out


def test_a_name_a_metadata_argument_reads_still_blocks():
    out, reasons = run("""
        def get_loader(args, rank):
            pipe = pipe_fn(batch_size=8, root=args.data, shard_id=rank, num_shards=2)
            rank = 1
            return DALIGenericIterator(pipe, ["x", "y"], reader_name="Reader")
    """)
    assert any("reads `rank`, which may be assigned again before the iterator" in r for r in reasons), reasons
    assert "reader_meta=" not in out


def test_a_value_computed_in_the_pipeline_for_a_left_out_argument_does_not_block():
    header = """\
from nvidia.dali import fn, pipeline_def
from nvidia.dali.plugin.pytorch import DALIGenericIterator


@pipeline_def(num_threads=2, device_id=0)
def pipe_fn(root, batch):
    fill = batch * 4
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, initial_fill=fill, name="Reader")
    return jpegs, labels


"""
    out, reasons = run("""
        def get_loader(root):
            pipe = pipe_fn(root, 8, batch_size=8)
            return DALIGenericIterator(pipe, ["x", "y"], reader_name="Reader")
    """, header)
    assert reasons == [], reasons
    assert "reader_meta=ndd.readers.File(file_root=root).get_metadata()" in out
    out, reasons = run("""
        def get_loader(root):
            pipe = pipe_fn(root, 8, batch_size=8)
            return DALIGenericIterator(pipe, ["x", "y"], reader_name="Reader")
    """, header.replace("initial_fill=fill", "shard_id=fill, num_shards=64"))
    # a value the reader's metadata needs, computed from the pipeline's parameters alone, is
    # computed again from what the call passes (shared_setup.inlined, params_ok)
    assert reasons == [], reasons
    assert "reader_meta=ndd.readers.File(file_root=root, shard_id=(8 * 4), num_shards=64).get_metadata()" in out


def _kwargs(text: str) -> frozenset:
    return _meta_free_kwargs(cst.parse_expression(text))


def test_only_proven_readers_on_the_cpu_leave_arguments_out():
    assert "random_shuffle" in _kwargs('ndd.readers.File(file_root="a", random_shuffle=True)')
    assert "random_shuffle" in _kwargs('dyn.experimental.readers.Video(device="cpu", file_root="a")')
    assert not _kwargs('ndd.readers.Video(device="gpu", filenames=f, random_shuffle=True)')  # GPU-only: not proved
    assert not _kwargs('ndd.experimental.readers.Video(device="gpu", file_root="a")')
    assert not _kwargs('ndd.readers.Numpy(device=dev, file_root="a")')  # maybe the GPU reader
    assert not _kwargs('ndd.readers.Sequence(file_root="a")')
    assert not {"shard_id", "num_shards", "pad_last_batch", "stick_to_shard"} & _kwargs('ndd.readers.File(file_root="a")')
