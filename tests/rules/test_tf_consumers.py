"""Pipelines given to TensorFlow's DALI plugin (dali_migrate/tf_consumers.py) stay in pipeline
mode, and their markers say so; the value given as `pipeline=` is followed back to what made it."""

import libcst as cst

from _helpers import convert
from dali_migrate import parents, tf_consumers
from dali_migrate.dali_imports import collect

TF = "import nvidia.dali as dali\nimport nvidia.dali.ops as ops\nimport nvidia.dali.plugin.tf as dali_tf\nfrom nvidia.dali.pipeline import Pipeline\n"
STAYS = "which runs the pipeline object itself (DALI's compiled TensorFlow plugin): it stays in pipeline mode"


def fed(src: str) -> dict:
    module = cst.parse_module(TF + src)
    found = tf_consumers.fed_to_tf(module, collect(module), parents.build(module))
    return {k if isinstance(k, str) else "Pipeline(...)": use.plugin for k, use in found.items()}


WRAPPER = '''
class Wrapper:
    def __init__(self, batch_size):
        self._pipe = dali.pipeline.Pipeline(batch_size=batch_size, num_threads=1, device_id=0)
        with self._pipe:
            jpegs, labels = dali.fn.readers.file(file_root="imgs")
            self._pipe.set_outputs(dali.fn.decoders.image(jpegs), labels)

    def dataset(self):
        return dali_tf.DALIDataset(pipeline=self._pipe, batch_size=4, output_dtypes=(tf.uint8, tf.int32))
'''


def test_a_hand_built_pipeline_kept_on_self_and_given_to_dalidataset_stays():
    assert fed(WRAPPER) == {"Pipeline(...)": "DALIDataset"}
    out = convert(WRAPPER, header=TF)
    assert "not converted: the pipeline is given to TensorFlow's DALIDataset (`return dali_tf.DALIDataset(pipeline=self._pipe" in out
    assert STAYS in out and "not converted yet" not in out
    assert "with self._pipe:" in out


def test_a_hand_built_pipeline_kept_on_self_and_not_given_to_tensorflow_converts():
    src = WRAPPER.replace("dali_tf.DALIDataset(pipeline=self._pipe, batch_size=4, output_dtypes=(tf.uint8, tf.int32))", "self._pipe.run()")
    assert fed(src) == {}
    out = convert(src, header=TF)
    assert "dali-migrate:" not in out
    assert "self._pipe = _pipe_batches()" in out and "return next(self._pipe)" in out


CLASSES = '''
class FilePipe(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, num_gpus):
        super().__init__(batch_size, num_threads, device_id)
        self.input = ops.readers.File(file_root="imgs", shard_id=device_id, num_shards=num_gpus)

    def define_graph(self):
        jpegs, labels = self.input()
        return jpegs, labels


class OtherPipe(FilePipe):
    pass


def per_gpu(batch_size, pipe_type):
    pipe_name, label_type = pipe_type
    pipes = [pipe_name(batch_size=batch_size, num_threads=2, device_id=i, num_gpus=2) for i in range(2)]
    daliop = dali_tf.DALIIterator()
    return [daliop(pipeline=pipes[d], shapes=[(4,), ()], dtypes=[tf.int32, label_type], device_id=d) for d in range(2)]


pipe_types = [[FilePipe, tf.int32]]
for pipe_name in pipe_types:
    test_batch = per_gpu(4, pipe_name)
'''


def test_classes_from_a_list_made_per_gpu_by_a_function_for_daliiterator():
    # a loop over the list, a parameter, unpacking, a comprehension, an index: each followed
    assert fed(CLASSES) == {"FilePipe": "DALIIterator"}
    out = convert(CLASSES, header=TF)
    assert "class FilePipe(Pipeline)" in out
    assert "not converted: the pipeline is given to TensorFlow's DALIIterator (`return [daliop(pipeline=pipes[d]" in out
    assert "takes its pipelines other than" not in out


def test_only_what_reaches_tensorflow_is_named():
    src = CLASSES.replace("pipe_types = [[FilePipe, tf.int32]]", "pipe_types = [[OtherPipe, tf.int32]]\nFilePipe(4, 1, 0, 1).run()")
    assert fed(src) == {"OtherPipe": "DALIIterator"}


def test_a_name_bound_twice_is_not_followed():
    src = CLASSES.replace("    pipe_name, label_type = pipe_type\n", "    pipe_name, label_type = pipe_type\n    pipe_name = make()\n")
    assert fed(src) == {}


def test_a_pipeline_function_a_factory_returns():
    src = '''
from nvidia.dali import pipeline_def

@pipeline_def(batch_size=4, num_threads=1, device_id=0)
def tf_pipe(root):
    jpegs, labels = dali.fn.readers.file(file_root=root)
    return jpegs, labels

def make(root):
    pipe = tf_pipe(root)
    return pipe

dataset = dali_tf.DALIDataset(make("imgs"), batch_size=4)
'''
    assert fed(src) == {"tf_pipe": "DALIDataset"}
