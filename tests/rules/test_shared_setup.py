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


ASKED_AGAIN = ("ndd.readers.File(file_root=data_dir, shard_id=(dist.get_rank() if dist.is_initialized() else 0), "
               "num_shards=(dist.get_world_size() if dist.is_initialized() else 1)).get_metadata()")


def test_a_caller_that_asks_otherwise_gets_the_pipelines_questions_asked_again():
    # the caller's world_size is not the pipeline's: the reader's arguments are the pipeline's
    # queries of the distributed setup, asked again where the iterator is made
    caller = TORCH_BLOCK.replace("world_size = dist.get_world_size()", "world_size = dist.get_world_size() // 2")
    out = run(TORCH_BLOCK, caller)
    assert "# dali-migrate:" not in out
    assert f"reader_meta={ASKED_AGAIN}" in out
    assert f'{ASKED_AGAIN}["epoch_size_padded"] // world_size' in out  # (the caller's own world_size)


def test_a_caller_that_does_not_ask_at_all_gets_them_too():
    # aoji0606/Prune: the iterator's function never asks for the rank
    out = run(TORCH_BLOCK, "world_size = 1")
    assert "# dali-migrate:" not in out and f"reader_meta={ASKED_AGAIN}" in out


def test_elif_and_a_name_computed_from_another_are_asked_again_whole():
    block = ('if dist.is_initialized():\n    rank = dist.get_rank()\nelif "RANK" in os.environ:\n'
             '    rank = int(os.environ.get("RANK"))\nelse:\n    rank = 0\nworld_size = 2\nshard = rank % world_size')
    src = PIPE.format(block=textwrap.indent(block, "    "), caller="    world_size = 2").replace("shard_id=rank", "shard_id=shard")
    out = convert(src, header=HEADER)
    assert "# dali-migrate:" not in out
    assert ('shard_id=((dist.get_rank() if dist.is_initialized() else (int(os.environ.get("RANK")) '
            'if ("RANK" in os.environ) else 0)) % 2)') in out


def test_a_try_block_is_asked_again_for_an_iterator_only():
    # no expression asks what a try/except asks: an iterator's rule puts the statements before the
    # pipeline is made (rules/test_asked_again.py); pipe.epoch_size() has no such place, and its
    # marker keeps the pipeline (else the iterator's reader would read names nothing binds)
    block = "try:\n    rank = dist.get_rank()\nexcept RuntimeError:\n    rank = 0\nworld_size = 1"
    out = run(block, "world_size = 1")
    assert "computed inside the pipeline" in out and "reader_meta=" not in out
    assert "pipe.epoch_size(): the reader's arguments use rank, world_size" in out


def test_a_call_not_known_to_be_deterministic_is_named():
    block = "rank = int(os.environ['RANK'])\nworld_size = torch.cuda.device_count()"
    out = run(block)
    assert "whose call torch.cuda.device_count() is not known to give the caller the same value" in out
    assert "reader_meta=" not in out


@pytest.mark.parametrize("rebinding", ["rank = rank % 8", "for rank in range(2):\n    pass",
                                       "with open(data_dir) as rank:\n    pass", "rank += 1"])
def test_a_rebinding_in_the_caller_in_between_does_not_reach_the_reader(rebinding):
    out = run(TORCH_BLOCK, TORCH_BLOCK + rebinding + "\n")
    assert "# dali-migrate:" not in out and f"reader_meta={ASKED_AGAIN}" in out


def test_an_import_shadowed_in_the_caller_is_refused():
    out = run(TORCH_BLOCK, "import my_fake_dist as dist\n" + TORCH_BLOCK)
    assert "binds `dist`, which they read" in out
    assert "reader_meta=" not in out


def test_os_getenv_is_asked_again_as_os_environ_get_is():
    block = 'rank = int(os.getenv("RANK", "0"))\nworld_size = int(os.getenv("WORLD_SIZE", "1"))'
    out = run(block, "world_size = 1")
    assert "# dali-migrate:" not in out
    assert 'shard_id=int(os.getenv("RANK", "0")), num_shards=int(os.getenv("WORLD_SIZE", "1"))' in out


FACTORY = '''
from nvidia.dali.pipeline import Pipeline


def create_pipeline(batch_size, data_dir, name):
{block}
    pipe = Pipeline(batch_size=batch_size, num_threads=2, device_id=0, seed=rank + 18)
    with pipe:
        jpegs, labels = fn.readers.file(file_root=data_dir, shard_id=rank, num_shards=world_size, name=name)
        pipe.set_outputs(jpegs, labels)
    pipe.build()
    return pipe


def get_loader(batch_size, data_dir):
    pipe = create_pipeline(batch_size, data_dir, name="train")
    return DALIClassificationIterator(pipe, reader_name="train")
'''


def test_a_factory_that_asks_for_the_rank_itself_is_asked_again_where_the_iterator_is():
    # deepglint/RWKV-CLIP: the with-pipe factory reads the launcher's environment
    block = '    rank = int(os.getenv("RANK"))\n    world_size = int(os.getenv("WORLD_SIZE"))'
    out = convert(FACTORY.format(block=block), header=HEADER)
    assert "# dali-migrate:" not in out
    assert ('reader_meta=ndd.readers.File(file_root=data_dir, shard_id=int(os.getenv("RANK")), '
            'num_shards=int(os.getenv("WORLD_SIZE"))).get_metadata()') in out


def test_a_factory_computing_the_rank_from_its_parameters_is_not_followed():
    block = '    rank = int(os.getenv("RANK")) % batch_size\n    world_size = int(os.getenv("WORLD_SIZE"))'
    out = convert(FACTORY.format(block=block), header=HEADER)
    assert "`rank`, which the pipeline is made with, is computed inside create_pipeline()" in out
    assert "reader_meta=" not in out


def test_a_reader_path_joined_from_the_parameters_is_joined_again_at_the_iterator():
    # ziplab/QTool: file_root=self.data_dir with self.data_dir = os.path.join(root, split); the
    # epoch size's reader is made with os.path.join of what the call passes
    from _helpers import convert as _convert

    src = (
        "import os\nimport nvidia.dali.ops as ops\nfrom nvidia.dali.pipeline import Pipeline\n"
        "from nvidia.dali.plugin.pytorch import DALIClassificationIterator\n\n\n"
        "class P(Pipeline):\n    def __init__(self, split, root):\n        super().__init__(4, 2, None, seed=12)\n"
        "        self.data_dir = os.path.join(root, split)\n"
        "        self.input = ops.readers.File(file_root=self.data_dir)\n\n"
        "    def define_graph(self):\n        jpegs, labels = self.input(name='Reader')\n        return jpegs, labels\n\n\n"
        "def loader(split, where):\n    pipe = P(split, where)\n    pipe.build()\n"
        "    return DALIClassificationIterator(pipe, size=pipe.epoch_size('Reader'))\n"
    )
    out = _convert(src, header="")
    assert "dali-migrate:" not in out, out
    assert "ndd.readers.File(file_root=os.path.join(where, split)).get_metadata()" in out
    # a call the file does not know to be pure is still not asked again
    out = _convert(src.replace("os.path.join(root, split)", "os.path.realpath(root)"), header="")
    assert "computed inside the pipeline" in out
