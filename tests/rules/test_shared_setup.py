"""Reader arguments computed inside the pipeline by statements the code making it runs too
(dali_migrate/shared_setup.py): the rank and world size of distributed training scripts."""

import textwrap

import pytest

from _helpers import convert

HEADER = (
    "import os\nimport torch\nimport torch.distributed as dist\nimport horovod.torch as hvd\n"
    "import nvidia.dali.fn as fn\nfrom nvidia.dali import pipeline_def\n"
    "from nvidia.dali.plugin.pytorch import DALIClassificationIterator\n"
)

PIPE = '''
@pipeline_def(batch_size=4, num_threads=2, device_id=0)
def train_pipe(data_dir):
{block}
    jpegs, labels = fn.readers.file(file_root=data_dir, shard_id=rank, num_shards=world_size, name="Reader")
    return fn.decoders.image(jpegs), labels


def make_loader(data_dir, batch_size):
{caller}
    pipe = train_pipe(data_dir)
    pipe.build()
    loader = DALIClassificationIterator(pipe, reader_name="Reader")
    return loader, pipe.epoch_size("Reader") // world_size
'''

TORCH_BLOCK = '''
if dist.is_initialized():
    rank = dist.get_rank()
    world_size = dist.get_world_size()
else:
    rank = 0
    world_size = 1
'''


def run(block: str, caller: str = None) -> str:
    caller = block if caller is None else caller
    indent = lambda text: textwrap.indent(textwrap.dedent(text).strip("\n"), "    ")
    return convert(PIPE.format(block=indent(block), caller=indent(caller)), header=HEADER)


READER = "ndd.readers.File(file_root=data_dir, shard_id=rank, num_shards=world_size).get_metadata()"


@pytest.mark.parametrize("block", [
    TORCH_BLOCK,
    "rank = hvd.rank()\nworld_size = hvd.size()",
    'rank = int(os.environ["RANK"])\nworld_size = int(os.environ.get("WORLD_SIZE", "1"))',
    # the statements the reader's names are computed from come along
    'env = os.environ\nrank = int(env["RANK"])\nworld_size = int(env["WORLD_SIZE"])',
])
def test_the_callers_names_are_the_readers_arguments(block):
    out = run(block)
    assert "# dali-migrate:" not in out
    assert f"reader_meta={READER}" in out
    assert f'{READER[:-len(".get_metadata()")]}.get_metadata()["epoch_size_padded"] // world_size' in out


def test_a_statement_that_differs_is_named():
    caller = TORCH_BLOCK.replace("world_size = dist.get_world_size()", "world_size = dist.get_world_size() // 2")
    out = run(TORCH_BLOCK, caller)
    assert "computed inside the pipeline by `if dist.is_initialized(): rank = dist.get_rank()" in out
    assert "which make_loader() does not run word for word before making the pipeline" in out
    assert "reader_meta=" not in out


def test_a_call_not_known_to_be_deterministic_is_named():
    block = "rank = int(os.environ['RANK'])\nworld_size = torch.cuda.device_count()"
    out = run(block)
    assert "whose call torch.cuda.device_count() is not known to give the caller the same value" in out
    assert "reader_meta=" not in out


@pytest.mark.parametrize("rebinding", ["rank = rank % 8", "for rank in range(2):\n    pass",
                                       "with open(data_dir) as rank:\n    pass", "rank += 1"])
def test_a_rebinding_in_the_caller_in_between_is_refused(rebinding):
    out = run(TORCH_BLOCK, TORCH_BLOCK + rebinding + "\n")
    assert "make_loader() binds `rank` elsewhere too" in out
    assert "reader_meta=" not in out


def test_a_rebinding_in_the_pipeline_in_between_must_be_run_by_the_caller_too():
    out = run(TORCH_BLOCK + "world_size = int(world_size)\n", TORCH_BLOCK)
    assert "computed inside the pipeline by `world_size = int(world_size)`, which make_loader() does not run" in out
    assert "reader_meta=" not in out


def test_a_call_site_with_the_statements_after_the_pipeline_is_refused():
    src = PIPE.format(block=textwrap.indent(TORCH_BLOCK.strip("\n"), "    "), caller="    pass")
    src = src.replace("    pipe.build()\n", "    pipe.build()\n" + textwrap.indent(TORCH_BLOCK.strip("\n"), "    ") + "\n")
    out = convert(src, header=HEADER)
    assert "does not run word for word before making the pipeline" in out
    assert "reader_meta=" not in out


def test_an_import_shadowed_in_the_caller_is_refused():
    out = run(TORCH_BLOCK, "import my_fake_dist as dist\n" + TORCH_BLOCK)
    assert "binds `dist`, which they read" in out
    assert "reader_meta=" not in out
