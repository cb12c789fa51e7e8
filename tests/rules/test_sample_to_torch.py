"""to_torch_tensor(tl[i], copy) -> batch.select(i).torch(copy=copy) (rules/sample_to_torch.py)."""

from tests.rules._helpers import HEADER, convert

SRC = HEADER + "from nvidia.dali.plugin.pytorch.torch_utils import to_torch_tensor\n" + '''
@pipeline_def(batch_size=2)
def q():
    return fn.random.uniform(range=[0, 1])

pipe = q()
pipe.build()
out = pipe.run()
'''


def test_sample_of_a_batch_becomes_select_then_torch():
    out = convert(SRC + "t = to_torch_tensor(out[0][1], copy=True)\n", header="")
    assert "t = out[0].select(1).torch(copy=True)\n" in out
    assert "to_torch_tensor" not in out  # its import goes with its last use


def test_shared_memory_form_keeps_no_copy_argument():
    out = convert(SRC + "t = to_torch_tensor(out[0].at(1), False)\n", header="")
    assert "t = out[0].select(1).torch()\n" in out


def test_without_a_copy_argument_is_left_to_a_person():
    out = convert(SRC + "t = to_torch_tensor(out[0][1])\n", header="")
    assert "@pipeline_def" in out and "without exactly one copy argument" in out


def test_sample_method_that_ndd_names_otherwise_is_left_to_a_person():
    out = convert(SRC + "frame = out[0][0].as_cpu()\n", header="")
    assert "@pipeline_def" in out and "a sample's .as_cpu" in out
