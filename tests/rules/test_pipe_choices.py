"""A variable of a function that chooses which pipeline it makes (pipe_choices.ChoiceAlias), as
NVIDIA DeepLearningExamples' Paddle ResNet-50 loader does (``pipe_class = None``, then
``pipe_class = HybridTrainPipe`` or ``HybridValPipe``, then ``pipe_class(...)``): what converts,
and what stays marked. The golden cases pipe_class_choice_paddle and pipeline_def_choice_torch run
the converted pipelines against DALI; tests/test_pipe_choices_paddle.py runs converted loaders."""

from __future__ import annotations

import textwrap

from dali_migrate.engine import convert_source

HEAD = '''\
import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin.paddle import DALIGenericIterator


class HybridPipeBase(Pipeline):
    def __init__(self, file_root, batch_size, device_id, crop, num_threads=4, seed=42, shard_id=0, num_shards=1):
        super().__init__(batch_size, num_threads, device_id, seed=seed)
        self.input = ops.readers.File(file_root=file_root, shard_id=shard_id, num_shards=num_shards, random_shuffle=True)
        self.build_ops(crop)

    def build_ops(self, crop):
        pass


class HybridTrainPipe(HybridPipeBase):
    def build_ops(self, crop):
        self.decode = ops.decoders.ImageRandomCrop(device="mixed")
        self.res = ops.Resize(device="gpu", resize_x=crop, resize_y=crop)

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        return [self.res(self.decode(jpegs)), labels.gpu()]


class HybridValPipe(HybridPipeBase):
    def build_ops(self, crop):
        self.decode = ops.decoders.Image(device="mixed")
        self.res = ops.Resize(device="gpu", resize_shorter=crop)

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        return [self.res(self.decode(jpegs)), labels.gpu()]


'''

LOADER = '''\
def dali_dataloader(args, mode, device_id):
    file_root = args.image_root
    pipe_class = None

    if mode == "train":
        file_root = os.path.join(file_root, "train")
        pipe_class = HybridTrainPipe
    else:
        file_root = os.path.join(file_root, "val")
        pipe_class = HybridValPipe

    pipe = pipe_class(file_root, args.batch_size, device_id, args.crop, num_threads=4, seed=7, shard_id=0, num_shards=1)
    pipe.build()
    return DALIGenericIterator([pipe], ["data", "label"], reader_name="Reader")
'''

PLAIN = '''\
    file_root = args.image_root
    pipe_class = None

    if mode == "train":
        file_root = os.path.join(file_root, "train")
        pipe_class = HybridTrainPipe
    else:
        file_root = os.path.join(file_root, "val")
        pipe_class = HybridValPipe
'''


def _convert(body: str, head: str = HEAD):
    result = convert_source("import os\n" + head + textwrap.dedent(body))
    return result.output, [m.reason for m in result.markers]


def _unconverted(out: str) -> bool:
    """Both classes, the base and the call site left as they were."""
    return ("class HybridTrainPipe(HybridPipeBase):" in out and "class HybridValPipe(HybridPipeBase):" in out
            and "class HybridPipeBase(Pipeline):" in out and "    pipe.build()\n" in out)


def test_a_choice_through_a_variable_converts_and_keeps_the_call():
    out, reasons = _convert(LOADER)
    assert reasons == [], out
    assert "def HybridTrainPipe(file_root, batch_size, device_id, crop, num_threads=4, seed=42, shard_id=0, num_shards=1):" in out
    assert "def HybridValPipe(file_root, batch_size, device_id, crop, num_threads=4, seed=42, shard_id=0, num_shards=1):" in out
    assert "class HybridPipeBase" not in out and "pipe.build()" not in out
    assert PLAIN in out  # the choice itself is kept as written
    assert "    pipe = pipe_class(file_root, args.batch_size, device_id, args.crop, num_threads=4, seed=7, shard_id=0, num_shards=1)\n" in out
    assert "    return DaliPaddleIterator(pipe, [\"data\", \"label\"], batch_size=args.batch_size, reader_meta=ndd.readers.File(" in out


def test_a_choice_without_none_first_converts():
    body = LOADER.replace("    pipe_class = None\n", "")
    out, reasons = _convert(body)
    assert reasons == [], out
    assert "class HybridPipeBase" not in out and "pipe.build()" not in out


def test_a_conditional_expression_choice_converts():
    body = LOADER.replace(PLAIN, '    pipe_class = HybridTrainPipe if mode == "train" else HybridValPipe\n'
                                 '    file_root = os.path.join(args.image_root, mode)\n')
    out, reasons = _convert(body)
    assert reasons == [], out
    assert '    pipe_class = HybridTrainPipe if mode == "train" else HybridValPipe\n' in out and "pipe.build()" not in out


def test_an_elif_chain_choosing_the_same_class_twice_converts():
    body = LOADER.replace('    else:\n        file_root = os.path.join(file_root, "val")\n',
                          '    elif mode == "val":\n        file_root = os.path.join(file_root, "val")\n'
                          '        pipe_class = HybridValPipe\n    else:\n        file_root = os.path.join(file_root, "test")\n')
    out, reasons = _convert(body)
    assert reasons == [], out
    assert out.count("        pipe_class = HybridValPipe\n") == 2 and "pipe.build()" not in out


def test_none_that_a_branch_may_leave_is_marked():
    # no else: with any other mode `pipe_class(...)` calls None; dali-migrate does not prove what that does
    body = LOADER.replace('    else:\n        file_root = os.path.join(file_root, "val")\n',
                          '    elif mode == "val":\n        file_root = os.path.join(file_root, "val")\n')
    out, reasons = _convert(body)
    assert _unconverted(out)
    assert any("`pipe_class` may still be None where `pipe_class(...)` is called" in r for r in reasons), reasons


def test_a_parameter_is_marked():
    body = LOADER.replace("def dali_dataloader(args, mode, device_id):", "def dali_dataloader(args, mode, device_id, pipe_class=None):")
    body = body.replace("    pipe_class = None\n", "")
    out, reasons = _convert(body)
    assert _unconverted(out)
    assert any("`pipe_class` is a parameter of dali_dataloader(): its callers may pass another pipeline" in r for r in reasons), reasons


def test_a_global_is_marked():
    body = LOADER.replace("    file_root = args.image_root\n", "    global pipe_class\n    file_root = args.image_root\n", 1)
    out, reasons = _convert(body)
    assert _unconverted(out)
    assert any("`pipe_class` holds a pipeline and is declared global" in r for r in reasons), reasons


def test_a_choice_at_module_level_is_marked():
    body = '''\
    pipe_class = HybridTrainPipe if os.environ.get("TRAIN") else HybridValPipe
    pipe = pipe_class("/data", 8, 0, 224)
    pipe.build()
    '''
    out, reasons = _convert(body)
    # (a module's variable: other modules and functions may read or assign it)
    assert "class HybridTrainPipe(HybridPipeBase):" in out and "\npipe.build()\n" in out
    assert any("HybridTrainPipe is used here in a way dali-migrate cannot follow (`pipe_class = HybridTrainPipe if os.environ" in r
               for r in reasons), reasons


def test_assigning_again_after_the_call_is_marked():
    for old, again in (("    pipe.build()\n", "    pipe.build()\n    pipe_class = HybridTrainPipe\n"),
                       ("    pipe.build()\n", "    pipe.build()\n    pipe_class = None\n"),
                       ("num_shards=1)\n", "num_shards=1); pipe_class = HybridValPipe\n")):
        body = LOADER.replace(old, again)
        assert body != LOADER
        out, reasons = _convert(body)
        assert _unconverted(out), again
        assert any("`pipe_class` is assigned again after `pipe_class(...)` made a pipeline" in r for r in reasons), (again, reasons)


def test_other_uses_of_the_variable_are_marked():
    for use in ("    print(pipe_class.__name__)\n", "    assert isinstance(pipe, pipe_class)\n", "    kinds = [pipe_class]\n"):
        out, reasons = _convert(LOADER.replace("    pipe.build()\n", "    pipe.build()\n" + use))
        assert _unconverted(out), use
        assert any("`pipe_class` holds a pipeline and is used here other than by calling it to make one" in r for r in reasons), (use, reasons)


def test_an_assignment_other_than_a_pipeline_is_marked():
    for other in ("    pipe_class = make_class(mode)\n", "    pipe_class = HybridValPipe if mode == 'val' else None\n"):
        body = LOADER.replace("    pipe_class = None\n", other)
        out, reasons = _convert(body)
        assert _unconverted(out), other
        assert any("`pipe_class` holds a pipeline and is also assigned here" in r or "may be None or a pipeline" in r
                   for r in reasons), (other, reasons)


def test_a_function_named_as_the_variable_is_marked():
    body = LOADER.replace("    pipe = pipe_class(", "    def pipe_class(*args, **kwargs):\n        return HybridValPipe(*args, **kwargs)\n\n    pipe = pipe_class(")
    out, reasons = _convert(body)
    assert _unconverted(out)
    assert any("`pipe_class` holds a pipeline and is also defined here as a function" in r for r in reasons), reasons


def test_a_nested_function_reading_the_variable_is_marked():
    body = LOADER.replace("    pipe.build()\n", "    pipe.build()\n\n    def describe():\n        return pipe_class.__name__\n\n")
    out, reasons = _convert(body)
    assert _unconverted(out)
    assert any("a nested function uses `pipe_class`" in r for r in reasons), reasons


def test_a_choice_that_is_not_a_pipeline_of_the_file_is_marked():
    body = "from mypipes import CocoPipe\n\n\n" + LOADER.replace("        pipe_class = HybridValPipe\n", "        pipe_class = CocoPipe\n")
    out, reasons = _convert(body)
    assert "class HybridTrainPipe(HybridPipeBase):" in out and "    pipe.build()\n" in out
    assert any("`pipe_class` may also hold `CocoPipe`, which dali-migrate does not convert here" in r for r in reasons), reasons


def test_a_choice_that_does_not_convert_leaves_the_other_marked():
    # a GPU python_function has no exact dynamic-mode form: HybridValPipe stays, and with it HybridTrainPipe
    at = HEAD.index("class HybridValPipe")
    val = HEAD[at:].replace('        self.res = ops.Resize(device="gpu", resize_shorter=crop)\n',
                            '        self.res = ops.Resize(device="gpu", resize_shorter=crop)\n'
                            '        self.twice = ops.PythonFunction(function=lambda x: x * 2, device="gpu")\n')
    val = val.replace("return [self.res(self.decode(jpegs)), labels.gpu()]", "return [self.twice(self.res(self.decode(jpegs))), labels.gpu()]")
    out, reasons = _convert(LOADER, HEAD[:at] + val)
    assert "self.twice(self.res(" in out and _unconverted(out)
    assert any("`pipe_class` may also hold `HybridValPipe`, which dali-migrate does not convert here" in r for r in reasons), reasons


def test_pipelines_that_need_different_iterator_code_are_marked():
    # the iterator reads the epoch from the reader: the two readers are written differently
    head = HEAD.replace(
        '''        self.res = ops.Resize(device="gpu", resize_shorter=crop)
''', '''        self.res = ops.Resize(device="gpu", resize_shorter=crop)
        self.input = ops.readers.File(file_root=file_root, random_shuffle=False)
''').replace("    def build_ops(self, crop):\n        self.decode = ops.decoders.Image(",
             "    def build_ops(self, crop, file_root=\"/val\"):\n        self.decode = ops.decoders.Image(")
    assert head.count("ops.readers.File") == 2
    out, reasons = _convert(LOADER, head)
    assert _unconverted(out)
    assert any("the pipelines chosen through `pipe_class` (HybridTrainPipe, HybridValPipe) would need different code for "
               "`DALIGenericIterator([pipe]" in r for r in reasons), reasons


def _own_readers(train_args: str, val_args: str) -> str:
    """Two Pipeline classes of the same signature, each making its own reader with these arguments."""
    head = HEAD[:HEAD.index("class HybridPipeBase")]
    for cls, args in (("HybridTrainPipe", train_args), ("HybridValPipe", val_args)):
        head += (f"class {cls}(Pipeline):\n"
                 f"    def __init__(self, file_root, batch_size, device_id, crop, num_threads=4, seed=42, shard_id=0, num_shards=1):\n"
                 f"        super().__init__(batch_size, num_threads, device_id, seed=seed)\n"
                 f"        self.input = ops.readers.File(file_root=file_root, shard_id=shard_id, num_shards=num_shards{args})\n"
                 f"        self.decode = ops.decoders.Image(device=\"mixed\")\n\n"
                 f"    def define_graph(self):\n"
                 f"        jpegs, labels = self.input(name=\"Reader\")\n"
                 f"        return [self.decode(jpegs), labels.gpu()]\n\n\n")
    return head


def test_readers_that_differ_only_in_shuffling_convert():
    # the reader written again for the epoch leaves shuffling out: the same code serves both
    head = _own_readers(", random_shuffle=True, initial_fill=4096, pad_last_batch=True", ", random_shuffle=False, pad_last_batch=True")
    out, reasons = _convert(LOADER, head)
    assert reasons == [], out
    assert ("reader_meta=ndd.readers.File(file_root=file_root, shard_id=0, num_shards=1, pad_last_batch=True).get_metadata()"
            in out)
    assert "random_shuffle=True, initial_fill=4096, pad_last_batch=True, seed=seed_or_random)" in out
    assert "random_shuffle=False, pad_last_batch=True)" in out


def test_readers_that_differ_in_what_the_epoch_reads_are_marked():
    for train, val in ((", pad_last_batch=True", ""), (", stick_to_shard=True", ", stick_to_shard=False"),
                       (", random_shuffle=True", ", random_shuffle=False, pad_last_batch=True")):
        out, reasons = _convert(LOADER, _own_readers(train, val))
        assert "class HybridTrainPipe(Pipeline):" in out and "class HybridValPipe(Pipeline):" in out, (train, val)
        assert any("the pipelines chosen through `pipe_class` (HybridTrainPipe, HybridValPipe) would need different code for "
                   "`DALIGenericIterator([pipe]" in r for r in reasons), reasons


def test_a_chosen_pipeline_returned_to_the_callers_is_marked():
    body = LOADER.replace('    return DALIGenericIterator([pipe], ["data", "label"], reader_name="Reader")\n', "    return pipe\n")
    body += '\n\nloader = DALIGenericIterator([dali_dataloader(args, "train", 0)], ["data", "label"], reader_name="Reader")\n'
    out, reasons = _convert(body)
    assert _unconverted(out)
    assert any("dali_dataloader() returns the pipeline it makes through `pipe_class`" in r for r in reasons), reasons


def test_a_local_of_the_candidate_name_is_marked():
    body = LOADER.replace("    file_root = args.image_root\n", "    file_root = args.image_root\n    HybridValPipe = args.pipe\n")
    out, reasons = _convert(body)
    assert "class HybridTrainPipe(HybridPipeBase):" in out and "    pipe.build()\n" in out
    assert any("`HybridValPipe` is a name of dali_dataloader() (or of a function around it), not the pipeline" in r
               for r in reasons), reasons


def test_a_choice_left_for_its_own_use_elsewhere_leaves_the_other_marked():
    # serialize() has no dynamic-mode form: HybridValPipe stays a class, so `pipe_class(...)` may make one
    body = LOADER + '\n\ndef export(path):\n    HybridValPipe(path, 8, 0, 224).serialize(filename="val.dali")\n'
    out, reasons = _convert(body)
    assert _unconverted(out)
    assert any("is chosen through one variable with pipeline HybridValPipe, which is not converted" in r for r in reasons), reasons


def test_a_chosen_pipeline_kept_on_self_is_marked():
    body = """\
    class Loader:
        def __init__(self, args, mode):
            pipe_class = HybridTrainPipe if mode == "train" else HybridValPipe
            self.pipe = pipe_class(args.image_root, args.batch_size, 0, args.crop)
            self.pipe.build()

        def __iter__(self):
            return DALIGenericIterator([self.pipe], ["data", "label"], reader_name="Reader")
    """
    out, reasons = _convert(body)
    assert "class HybridTrainPipe(HybridPipeBase):" in out and "self.pipe.build()" in out
    assert any("`pipe_class` (HybridTrainPipe or HybridValPipe, chosen in __init__()) is used by `self.pipe = pipe_class(" in r
               for r in reasons), reasons


ES_CHOICE = '''\
import numpy as np
import nvidia.dali.fn as fn
from nvidia.dali import pipeline_def
from nvidia.dali.plugin.pytorch import DALIGenericIterator


def batches():
    for i in range(3):
        yield [np.full((2, 2), i, dtype=np.uint8)] * 4


@pipeline_def(batch_size=4, num_threads=2, device_id=0)
def synthetic_pipe():
    return fn.external_source(source=batches, batch=True),


@pipeline_def(batch_size=4, num_threads=2, device_id=0)
def file_pipe(root="/data"):
    jpegs, _ = fn.readers.file(file_root=root)
    return fn.decoders.image(jpegs),


def loader(synthetic):
    make = synthetic_pipe if synthetic else file_pipe
    pipe = make()
    pipe.build()
    return DALIGenericIterator([pipe], ["data"])
'''


def test_an_external_source_pipeline_chosen_with_a_reader_pipeline_is_marked():
    # an iterator drives a converted external source through its restartable form, a reader pipeline not
    out, reasons = _convert("", ES_CHOICE)
    assert out.count("@pipeline_def") == 2 and "    pipe.build()\n" in out
    assert any("the pipelines chosen through `make` in loader() would convert in different forms" in r for r in reasons), reasons
    both = ES_CHOICE.replace("    jpegs, _ = fn.readers.file(file_root=root)\n    return fn.decoders.image(jpegs),",
                             "    return fn.external_source(source=batches, batch=True) + 1,")
    out, reasons = _convert("", both)
    assert reasons == [], out
    assert out.count("yield None") == 2 and "    return DaliTorchSourceIterator(PrefetchedPipeline(pipe), " in out
