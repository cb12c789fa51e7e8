"""DALI's CPU-only device id (types.CPU_ONLY_DEVICE_ID, -99999) leaves the pipeline to a person.

Older DALI read it as "no GPU". DALI 1.53 and later take it for a GPU's id: the pipeline does not
build (without CUDA it asks for device_id=None, with CUDA the id is invalid), and ndd.EvalContext
rejects a negative id. Converted with the id as written,
the code failed at its first batch; converted with None, it would run where the original fails.
So the pipeline stays as written, with a marker that says to pass None."""

import pytest

from dali_migrate.pipeline_analysis import CPU_ONLY_DEVICE_REASON
from tests.rules._helpers import HEADER, convert

IN_DECORATOR = HEADER + '''
@pipeline_def(batch_size=2, num_threads=1, device_id=types.CPU_ONLY_DEVICE_ID)
def pipe(data_dir):
    jpegs, labels = fn.readers.file(file_root=data_dir)
    return fn.decoders.image(jpegs), labels


p = pipe("x")
p.build()
'''

AT_CALL = HEADER + '''
import nvidia.dali as dali


@pipeline_def
def pipe(data_dir):
    jpegs, labels = fn.readers.file(file_root=data_dir)
    return fn.decoders.image(jpegs), labels


p = pipe("x", batch_size=2, num_threads=1, device_id={value})
p.build()
'''

SUBCLASS = '''
from nvidia.dali.pipeline import Pipeline
import nvidia.dali.ops as ops
import nvidia.dali.types as types


class P(Pipeline):
    def __init__(self, batch_size, root):
        super().__init__(batch_size, 1, types.CPU_ONLY_DEVICE_ID)
        self.input = ops.readers.File(file_root=root)

    def define_graph(self):
        return self.input()


p = P(2, "x")
p.build()
'''

WITH_PIPE = '''
import nvidia.dali.fn as fn
from nvidia.dali.pipeline import Pipeline

pipe = Pipeline(batch_size=2, num_threads=1, device_id=-99999)
with pipe:
    jpegs, labels = fn.readers.file(file_root="x")
    pipe.set_outputs(jpegs, labels)
pipe.build()
'''


@pytest.mark.parametrize("src", [
    IN_DECORATOR,
    AT_CALL.format(value="-99999"),
    AT_CALL.format(value="dali.types.CPU_ONLY_DEVICE_ID"),
    SUBCLASS,
    WITH_PIPE,
], ids=["decorator", "call-literal", "call-constant", "subclass", "with-pipe"])
def test_the_cpu_only_id_leaves_the_pipeline_as_written_with_a_marker(src):
    out = convert(src, header="")
    assert CPU_ONLY_DEVICE_REASON in out
    assert ".build()" in out and "ndd.EvalContext(" not in out


def test_none_converts():
    out = convert(AT_CALL.format(value="None"), header="")
    assert "dali-migrate:" not in out and "ndd.EvalContext(" in out


def test_a_pipeline_parameter_named_device_id_is_not_the_setting():
    # DALI gives the call's value to the function's own parameter, not to the pipeline
    out = convert(HEADER + '''
@pipeline_def(batch_size=2, num_threads=1)
def pipe(data_dir, device_id):
    jpegs, labels = fn.readers.file(file_root=data_dir, shard_id=0 if device_id < 0 else device_id)
    return jpegs, labels


p = pipe("x", device_id=-99999)
''', header="")
    assert CPU_ONLY_DEVICE_REASON not in out


def test_dali_takes_the_cpu_only_id_for_a_gpu_and_ndd_rejects_it():
    """What the marker says, checked against the DALI installed (a change there makes it stale)."""
    pytest.importorskip("nvidia.dali")
    import nvidia.dali.experimental.dynamic as ndd
    import nvidia.dali.fn as fn
    from nvidia.dali import types
    from nvidia.dali.pipeline import Pipeline

    from dali_migrate.runtime._backend import cuda_device_count

    pipe = Pipeline(batch_size=2, num_threads=1, device_id=types.CPU_ONLY_DEVICE_ID)
    with pipe:
        pipe.set_outputs(fn.random.uniform())
    if cuda_device_count() > 0:  # (seen on an H200 with DALI 2.4: "The device_id=-99999 is invalid")
        with pytest.raises(ValueError, match="-99999 is invalid"):
            pipe.build()
    else:
        with pytest.raises(RuntimeError, match="device_id = None"):
            pipe.build()
    with pytest.raises(ValueError, match="Invalid device id"):
        ndd.EvalContext(device_id=types.CPU_ONLY_DEVICE_ID)
