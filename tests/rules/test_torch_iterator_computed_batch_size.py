"""torch-iterator over a Pipeline subclass that computes its batch size from its constructor's
arguments (``super().__init__(batch_size=args.batch_size, ...)``, DALI's SSD example): the
iterator reads the same expression with the call's arguments in place of the parameters, where
the pipeline is made right there and nothing changes them in between; else it keeps its marker."""
import argparse

import pytest

from _helpers import convert, run_both

SRC = '''
import argparse
from nvidia.dali.pipeline import Pipeline
import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy


class TrainPipe(Pipeline):
    def __init__(self, args, seed):
        super().__init__(batch_size=args.batch_size, num_threads=args.workers, device_id=None, seed=seed)
        self.input = ops.readers.File(file_root=args.data, shard_id=0, num_shards=1, pad_last_batch=True)
        self.decode = ops.decoders.Image(output_type=types.RGB)
        self.resize = ops.Resize(resize_x=16, resize_y=16)

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        return self.resize(self.decode(jpegs)), labels


def get_loader(args, seed):
{between}    loader = DALIGenericIterator(pipe, ["images", "labels"], reader_name="Reader",
                                 last_batch_policy=LastBatchPolicy.PARTIAL)
    return loader


def epochs(args, seed, n):
    loader = get_loader(args, seed)
    out = []
    for _ in range(n):
        out.append([(b[0]["images"].clone(), b[0]["labels"].clone()) for b in loader])
        loader.reset()
    return out
'''
MADE = "    pipe = TrainPipe(args, seed=seed)\n"


def test_the_iterator_reads_the_expression_with_the_call_arguments():
    out = convert(SRC.format(between=MADE), header="")
    assert "dali-migrate:" not in out
    assert 'loader = DaliTorchIterator(pipe, ["images", "labels"], batch_size=args.batch_size, ' in out


def test_the_converted_loader_gives_the_same_epochs(tmp_path, fixture_data):
    pytest.importorskip("nvidia.dali")
    torch = pytest.importorskip("torch")
    src = SRC.format(between=MADE)
    out = convert(src, header="")
    args = argparse.Namespace(batch_size=4, workers=1, data=str(fixture_data / "images"))
    want, got = run_both(tmp_path, src, out, "epochs", args, 7, 2)
    assert len(want) == len(got) == 2
    for w, g in zip(want, got):
        assert [x[0].shape[0] for x in w] == [x[0].shape[0] for x in g] == [4, 4, 4, 4, 4, 1]  # PARTIAL: the last batch cut
        for (wi, wl), (gi, gl) in zip(w, g):
            assert torch.equal(wi, gi) and torch.equal(wl, gl)


@pytest.mark.parametrize("between, why", [
    # the pipeline read the batch size when it was made; the iterator would read the new one
    (MADE + "    args.batch_size = 2\n", "may be assigned again before the iterator is made"),
    # the expression would run a second time at the iterator
    ("    pipe = TrainPipe(parse(), seed=seed)\n", "`args` gets parse() here"),
    # made by another function: its arguments are that function's, not the iterator's
    ("    pipe = make(args, seed)\n", "computed from its constructor's arguments, and another function makes the pipeline"),
])
def test_where_the_iterator_cannot_read_it_the_iterator_is_marked(between, why):
    src = SRC.format(between=between) + "\n\ndef make(args, seed):\n    return TrainPipe(args, seed)\n"
    out = convert(src, header="")
    assert "DALIGenericIterator(pipe" in out and why in out, out
