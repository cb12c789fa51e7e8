from _helpers import convert


def test_pipeline_subclass_that_cannot_convert_is_marked_once_with_the_reason():
    out = convert(
        "import nvidia.dali.ops as ops\nfrom nvidia.dali.pipeline import Pipeline\n"
        "class P(Pipeline):\n    def __init__(self):\n        super().__init__(2, 1, 0)\n        self.r = ops.readers.File(file_root='d')\n"
        "    def define_graph(self):\n        return self.r()\n    def epoch_size(self, name=None):\n        return 4\n"
    )
    assert out.count("# dali-migrate:") == 1
    assert "[legacy-pipeline] not converted: epoch_size() overrides Pipeline.epoch_size" in out
    assert "class P(Pipeline):" in out


def test_serialize_marked():
    out = convert("from nvidia.dali.plugin.triton import autoserialize\n@autoserialize\n@pipeline_def(batch_size=2)\ndef p():\n    return fn.random.uniform()\n")
    assert "serving (Triton) needs pipeline mode" in out


def test_file_without_dali_untouched():
    from dali_migrate.engine import convert_source

    src = "import os\nprint(os.getcwd())\n"
    assert convert_source(src).output == src


def test_helper_building_operators_is_marked_and_blocks_its_pipeline():
    out = convert(
        # (a loop: a helper that is straight-line code is written into the pipeline instead)
        "def aug(x):\n    for _ in range(2):\n        x = fn.flip(x)\n    return x\n\n"
        "@pipeline_def(batch_size=2)\ndef p():\n    j, l = fn.readers.file(file_root='d')\n    return aug(fn.decoders.image(j)), l\n"
    )
    assert "aug() builds DALI operators with fn.*" in out
    assert "calls aug(), which builds DALI operators itself" in out
    assert "@pipeline_def" in out


_READER_PIPE = (
    "@pipeline_def(batch_size=4, device_id=0)\ndef p(root):\n"
    "    jpegs, labels = fn.readers.file(file_root=root, name='Reader')\n    return jpegs, labels\n"
)


def test_data_iterator_is_marked_as_a_pipeline_definition_not_as_a_helper():
    out = convert(
        "from nvidia.dali.plugin.jax import data_iterator\n"
        "@data_iterator(output_map=['x'], reader_name='R')\ndef it(root):\n"
        "    return fn.readers.file(file_root=root, name='R')[0]\n"
        "@data_iterator\ndef bare():\n    return fn.random.uniform(shape=[2])\n"
    )
    assert out.count("[not-yet-converted] @data_iterator: not converted; the function is a pipeline definition") == 2
    assert "builds DALI operators with fn.*" not in out
    assert "@pipeline_def(num_threads=4, device_id=0)" in out  # the decorator's defaults, to write out


def test_a_users_own_data_iterator_decorator_is_not_a_dali_one():
    out = convert("from mylib import data_iterator\n@data_iterator\ndef aug(x):\n    return fn.flip(x)\n")
    assert "aug() builds DALI operators with fn.*" in out and "@data_iterator:" not in out


def test_peekable_iterators_add_peek_to_the_hint():
    out = convert(
        "from nvidia.dali.plugin.jax.clu import DALIGenericPeekableIterator as It\n" + _READER_PIPE
        + "pipe = p('d')\nit = It([pipe], ['a', 'b'], reader_name='Reader')\n"
    )
    assert "given to DALIGenericPeekableIterator, which dali-migrate does not convert" in out
    assert "[not-yet-converted] JAX iterator not converted" in out and "peek() / peek_async() by hand" in out


def test_tensorflow_hint_names_the_iterator_it_marks():
    out = convert("import nvidia.dali.plugin.tf as dali_tf\n" + _READER_PIPE + "pipe = p('d')\nds = dali_tf.DALIDatasetWithInputs(pipeline=pipe)\n")
    assert "[not-yet-converted] TensorFlow DALIDatasetWithInputs runs the pipeline object itself" in out
    assert "tf.data.Dataset.from_generator" in out and "{iterator}" not in out


def test_paddle_hint_keeps_partial_and_lod_for_a_person():
    # A LoD level is what the paddle-iterator rule leaves to a person.
    out = convert("from nvidia.dali.plugin.paddle import DALIGenericIterator\n" + _READER_PIPE + "pipe = p('d')\nit = DALIGenericIterator([pipe], ['a', ('b', 1)])\n")
    assert "paddle.framework.core.from_dlpack(ndd.as_tensor(batch).__dlpack__())" in out
    assert "PARTIAL: cut the last batch" in out and "@pipeline_def" in out


def test_helpers_nothing_in_the_file_calls_say_they_serve_other_modules():
    out = convert(
        "def flip(x):\n    return fn.flip(x, horizontal=fn.random.coin_flip())\n\n"
        "def mosaic(x):\n    return flip(fn.rotate(x, angle=90))\n"
    )
    for name in ("flip", "mosaic"):
        assert f"{name}() builds DALI operators with fn.* and nothing in this file calls it: it serves pipelines of other modules" in out


def test_a_helper_called_by_a_helper_the_file_calls_is_not_said_to_serve_other_modules():
    out = convert(
        "def flip(x):\n    return fn.flip(x)\n\n"
        "def aug(x):\n    for _ in range(2):\n        x = flip(x)\n    return x\n\n"
        "@pipeline_def(batch_size=2)\ndef p():\n    j, l = fn.readers.file(file_root='d')\n    return aug(fn.decoders.image(j)), l\n"
    )
    assert "flip() builds DALI operators with fn.*, which only works inside a pipeline" in out
    assert "nothing in this file calls it" not in out


def test_a_helper_reached_only_through_a_function_nothing_calls_serves_other_modules():
    out = convert("def flip(x):\n    return fn.flip(x)\n\ndef aug(x):\n    return flip(x)\n")
    assert "flip() builds DALI operators with fn.* and nothing in this file calls it" in out


def test_an_iterator_over_a_pipeline_of_another_module_says_where_the_pipeline_is():
    # data.py of DALI's SSD example: the Pipeline subclass lives in src/coco_pipeline.py
    src = (
        "from src.coco_pipeline import COCOPipeline\nfrom nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy\n\n"
        "def loader(args, boxes, seed):\n    train_pipe = COCOPipeline(boxes, args, seed=seed)\n"
        "    return DALIGenericIterator(train_pipe, ['images'], reader_name='Reader', last_batch_policy=LastBatchPolicy.FILL)\n"
    )
    out = convert(src, header="")
    assert "its pipeline comes from COCOPipeline(), imported from src.coco_pipeline: dali-migrate converts one file at a time" in out
    assert "see the call-site marker" not in out
    # a pipeline function of this file: its own marker says why (none here: a name it does not define)
    local = src.replace("from src.coco_pipeline import COCOPipeline\n", "").replace("COCOPipeline(", "make_pipe(")
    assert "see the call-site marker" in convert(local, header="")
    relative = convert(src.replace("from src.coco_pipeline", "from .coco_pipeline"), header="")
    assert "imported from .coco_pipeline:" in relative


def test_a_helper_names_the_pipelines_that_call_it_and_did_not_convert():
    # DALI's webdataset notebook: decode_augment() could be written in, but its pipeline also
    # calls a helper that cannot, and has a parameter named like a pipeline setting
    src = (
        "def aug(x, seed=1):\n    return fn.jitter(fn.decoders.image(x), seed=seed)\n\n"
        "@pipeline_def(batch_size=2)\ndef p(root, seed=1):\n    j, l = fn.readers.file(file_root=root)\n    return aug(j, seed=seed), l\n"
    )
    out = convert(src)
    assert "aug() builds DALI operators with fn.*" in out
    assert "; p(), which calls it, is not converted: see the marker there" in out
    assert "parameter(s) seed clash with the pipeline settings" in out
    # where the pipeline converts, the helper is written into it and no marker is left
    assert "dali-migrate:" not in convert(src.replace(", seed=1):\n    j", "):\n    j").replace("aug(j, seed=seed)", "aug(j)"))


# No rule writes a call-site marker for an iterator whose pipeline is not converted at all: the
# iterator's marker says which pipeline it is and that its own marker says why.
_UNCONVERTED = (
    "import nvidia.dali.ops as ops\nfrom nvidia.dali.pipeline import Pipeline\n"
    "from nvidia.dali.plugin.pytorch import DALIClassificationIterator\n\n"
    "class TrainPipe(Pipeline):\n    def __init__(self, root, cpu):\n        super().__init__(8, 2, 0)\n"
    "        self.reader = ops.readers.File(file_root=root)\n        if cpu:\n            self.decode = ops.decoders.Image(device='cpu')\n"
    "        else:\n            self.decode = ops.decoders.Image(device='mixed')\n"
    "    def define_graph(self):\n        jpegs, labels = self.reader(name='Reader')\n        return self.decode(jpegs), labels\n\n"
)


def test_an_iterator_over_a_pipeline_left_unconverted_names_it():
    out = convert(_UNCONVERTED + "def loader(root):\n    pipe = TrainPipe(root, False)\n    pipe.build()\n"
                  "    return DALIClassificationIterator(pipe, reader_name='Reader')\n", header="")
    assert "PyTorch iterator not converted (its pipeline, TrainPipe, is not converted: its marker says why)" in out
    assert "see the call-site marker" not in out
    with_pipe = convert(
        "import nvidia.dali.fn as fn\nfrom nvidia.dali.pipeline import Pipeline\nfrom nvidia.dali.plugin.pytorch import DALIGenericIterator\n\n"
        "def loader(root, pad):\n    pipe = Pipeline(batch_size=8, num_threads=2, device_id=0)\n    scale = get_scale()\n"
        "    with pipe:\n        jpegs, labels = fn.readers.file(file_root=root, name='Reader')\n"
        "        pipe.set_outputs(fn.decoders.image(jpegs) * scale, labels)\n    pipe.build()\n    scale = None\n"
        "    return DALIGenericIterator([pipe], ['x', 'y'], reader_name='Reader')\n", header="")
    assert "while True" not in with_pipe  # (`scale`, changed after the `with` block, stops it)
    assert "(its pipeline, made by Pipeline(...) and `with`, is not converted: its marker says why)" in with_pipe


def test_an_iterator_over_a_parameter_says_the_pipeline_is_made_by_the_caller():
    out = convert("from nvidia.dali.plugin.pytorch import DALIGenericIterator\n\n"
                  "class Loader:\n    def __init__(self, pipelines, names):\n"
                  "        self.it = DALIGenericIterator(pipelines, names, reader_name='Reader')\n", header="")
    assert "(its pipeline comes in as `pipelines`, a parameter of __init__(): it is made, and converted or not, where that is called)" in out
    # atlas_sr's wrapper class: the pipeline comes through *args
    starred = convert("from nvidia.dali.plugin.pytorch import DALIGenericIterator\n\n"
                      "def wrap(*args, **kwargs):\n    return DALIGenericIterator(*args, **kwargs)\n", header="")
    assert "(its pipeline comes in through `*args, **kwargs` of wrap(): it is made, and converted or not, where that is called)" in starred
    assert "see the call-site marker" not in starred
    unknown = convert("from nvidia.dali.plugin.pytorch import DALIGenericIterator\n\n"
                      "def wrap(pipes, **kwargs):\n    return DALIGenericIterator(*pipes, **kwargs)\n", header="")
    assert "see the call-site marker" in unknown  # `*pipes` is not the function's own *args: nothing to say


_ITERATOR = "from nvidia.dali.plugin.pytorch import DALIClassificationIterator, LastBatchPolicy\n"


def test_an_iterator_over_a_function_of_an_imported_module_says_where_the_pipeline_is():
    # cupid's inference notebook: the pipeline function lives in the project's dali/dali_infer.py
    src = ("import dali.dali_infer as dali\n" + _ITERATOR +
           "pipeline = dali.infer_pipe(batch_size=128, num_threads=16, external_data=infer_iter)\n"
           "pii = DALIClassificationIterator(pipeline, last_batch_padded=True, last_batch_policy=LastBatchPolicy.PARTIAL)\n")
    out = convert(src, header="")
    assert ("PyTorch iterator not converted (its pipeline comes from dali.infer_pipe(), imported from dali.dali_infer: "
            "dali-migrate converts one file at a time") in out
    assert "see the call-site marker" not in out
    dotted_import = convert(src.replace("import dali.dali_infer as dali", "import loaders.dali").replace("dali.infer_pipe(", "loaders.dali.infer_pipe("), header="")
    assert "its pipeline comes from loaders.dali.infer_pipe(), imported from loaders.dali:" in dotted_import
    from_import = convert(src.replace("import dali.dali_infer as dali", "from project import dali"), header="")
    assert "its pipeline comes from dali.infer_pipe(), imported from project:" in from_import
    # `dali` bound again in the file: which module's function it is cannot be told
    rebound = convert(src.replace("pipeline = ", "dali = make_dali()\npipeline = "), header="")
    assert "imported from" not in rebound and "see the call-site marker" in rebound


def test_an_iterator_over_a_pipeline_kept_on_self_says_what_made_it():
    method_pipe = convert(
        "from nvidia.dali import fn, pipeline_def\nfrom nvidia.dali.plugin.pytorch import DALIGenericIterator\n\n"
        "class Loader:\n    def __init__(self, root):\n        self.root = root\n        self.pipeline = self._create_pipeline()\n"
        "        self.pipeline.build()\n        self.it = DALIGenericIterator([self.pipeline], ['rgb'], reader_name='Reader')\n\n"
        "    @pipeline_def(batch_size=4, num_threads=2, device_id=0)\n    def _create_pipeline(self):\n"
        "        return fn.readers.file(file_root=self.root, name='Reader')[0]\n", header="")
    assert "(its pipeline, self._create_pipeline, is not converted: its marker says why)" in method_pipe
    assert "pipeline defined as a method" in method_pipe
    with_pipe = convert(
        "from nvidia.dali import fn\nfrom nvidia.dali.pipeline import Pipeline\nfrom nvidia.dali.plugin.pytorch import DALIGenericIterator\n\n"
        "class Data:\n    def __init__(self, root):\n        self.pipeline = None\n        self.root = root\n\n"
        "    def get_pipeline(self, shard):\n        pipeline = Pipeline(batch_size=4, num_threads=2, device_id=0)\n"
        "        with pipeline:\n            a, _ = fn.readers.file(file_root=self.root, shard_id=shard, num_shards=2, name='data')\n"
        "            b, _ = fn.readers.file(file_root=self.root, name='label')\n            pipeline.set_outputs(a, b)\n"
        "        return pipeline\n\n"
        "    def start(self):\n        self.pipeline = self.get_pipeline(0)\n        self.pipeline.build()\n"
        "        self.iterator = DALIGenericIterator([self.pipeline], ['data', 'label'], reader_name='data')\n", header="")
    assert ("(its pipeline is made by self.get_pipeline(), with Pipeline(...) and `with`, which is not converted: "
            "the marker there says why)") in with_pipe
    assert "the pipeline was made by another function, whose arguments cannot be matched" in with_pipe


def test_an_iterator_over_a_factorys_list_or_a_data_iterator_says_what_made_it():
    factory = convert(
        "from nvidia.dali import fn\nfrom nvidia.dali.pipeline import Pipeline\nfrom nvidia.dali.plugin.paddle import DALIGenericIterator\n\n"
        "def create_pipeline(root, device_id):\n    pipeline = Pipeline(4, 2, device_id)\n    with pipeline:\n"
        "        a, _ = fn.readers.file(file_root=root, name='Reader')\n        b, _ = fn.readers.file(file_root=root)\n"
        "        pipeline.set_outputs(a, b)\n    return pipeline\n\n"
        "def main(root):\n    pipelines = [create_pipeline(root, i) for i in range(2)]\n"
        "    return DALIGenericIterator(pipelines, ['a', 'b'], reader_name='Reader')\n", header="")
    assert ("Paddle iterator not converted (its pipelines are made by create_pipeline(), with Pipeline(...) and `with`, "
            "which is not converted: the marker there says why)") in factory
    data_iterator = convert(
        "from nvidia.dali import fn\nfrom nvidia.dali.plugin.jax import data_iterator\nfrom nvidia.dali.plugin import jax as dax\n\n"
        "@data_iterator(output_map=['x'], reader_name='R')\ndef it(root):\n    return fn.readers.file(file_root=root, name='R')[0]\n\n"
        "def main(root):\n    pipe = it(root, batch_size=4)\n    return dax.DALIGenericIterator(pipe, output_map=['x'], reader_name='R')\n", header="")
    assert ("JAX iterator not converted (its pipeline comes from it(), a @data_iterator function, which is not converted: "
            "its marker says what to do)") in data_iterator


def test_an_iterator_over_a_variable_holding_pipeline_classes_names_them():
    out = convert(_UNCONVERTED + "class ValPipe(TrainPipe):\n    pass\n\n"
                  "def loader(root, train):\n    pipe_class = None\n    if train:\n        pipe_class = TrainPipe\n"
                  "    else:\n        pipe_class = ValPipe\n    pipe = pipe_class(root, False)\n    pipe.build()\n"
                  "    return DALIClassificationIterator(pipe, reader_name='Reader')\n", header="")
    assert ("(its pipeline is made by pipe_class(...), which holds TrainPipe or ValPipe here: they are not converted: "
            "their markers say why)") in out
    assert out.count("[legacy-pipeline] not converted") >= 2
    other = convert(_UNCONVERTED + "def loader(root, train):\n    pipe_class = TrainPipe if train else make_class()\n"
                    "    pipe = pipe_class(root, False)\n    return DALIClassificationIterator(pipe, reader_name='Reader')\n", header="")
    assert "holds" not in other


def test_iterator_over_a_class_whose_base_is_a_pipeline_subclass_names_it():
    # the class is left as it was (its marker says why): no call-site marker is written for it
    out = convert(
        "import nvidia.dali.ops as ops\nfrom nvidia.dali.pipeline import Pipeline\n"
        "from nvidia.dali.plugin.pytorch import DALIGenericIterator\n\n\n"
        "class Base(Pipeline):\n    def __init__(self, batch_size, num_threads, device_id, files):\n"
        "        super().__init__(batch_size=batch_size, num_threads=num_threads, device_id=device_id)\n"
        "        self.read = ops.readers.Numpy(files=files)\n\n\n"
        "class Test(Base):\n    def __init__(self, files, **kwargs):\n        super().__init__(files=files, **kwargs)\n\n"
        "    def define_graph(self):\n        return self.read(name='r')\n\n\n"
        "def loader(files):\n    pipe = Test(files, batch_size=1, num_threads=2, device_id=0)\n"
        "    return DALIGenericIterator(pipe, ['x'])\n"
    )
    assert "(its pipeline, Test, is not converted: its marker says why)" in out
    assert "see the call-site marker" not in out


def test_a_pipeline_class_defined_under_a_module_level_if_converts_in_place():
    # ziplab/QTool: the class is defined only when DALI imports
    out = convert(
        "try:\n    from nvidia.dali.pipeline import Pipeline\n    from nvidia.dali.plugin.pytorch import DALIClassificationIterator\n"
        "    import nvidia.dali.ops as ops\n    dali_enable = True\nexcept ImportError:\n    dali_enable = False\n\n"
        "if dali_enable:\n    class HybridPipe(Pipeline):\n        def __init__(self, batch_size, num_threads, data_dir):\n"
        "            super().__init__(batch_size, num_threads, 0, seed=12)\n"
        "            self.input = ops.readers.File(file_root=data_dir)\n\n"
        "        def define_graph(self):\n            jpegs, labels = self.input(name='Reader')\n            return jpegs, labels\n\n"
        "    def dali_loader(batch_size, data_dir):\n        pipe = HybridPipe(batch_size, 4, data_dir)\n        pipe.build()\n"
        "        return DALIClassificationIterator(pipe, size=pipe.epoch_size('Reader'))\n",
        header="",
    )
    # converted where it stands: the module defines it once, on import, as it did the class
    assert "dali-migrate:" not in out, out
    assert "if dali_enable:\n    def HybridPipe(batch_size, num_threads, data_dir, *, device_id=0, seed=12):\n" in out
    assert "return DaliTorchIterator(pipe, " in out
    # a class under an `if` inside a function is made on each call: still marked with where it is
    src = (
        "from nvidia.dali.pipeline import Pipeline\nimport nvidia.dali.ops as ops\n\n\n"
        "def make(data_dir, flag):\n    if flag:\n        class P(Pipeline):\n            def __init__(self):\n"
        "                super().__init__(2, 1, None)\n                self.input = ops.readers.File(file_root=data_dir)\n\n"
        "            def define_graph(self):\n                return self.input()[0]\n\n        return P()\n"
    )
    assert "it is defined inside an `if`" in convert(src, header="")


def test_a_class_based_on_object_that_makes_a_pipeline_inside_is_no_pipeline_subclass():
    # gluon-detector: a helper class whose __init__ defines and builds a Pipeline of its own
    out = convert(
        "from nvidia import dali\nfrom nvidia.dali.pipeline import Pipeline\n\n\n"
        "class COCOInput(object):\n    def __init__(self, file_root):\n"
        "        self.input = dali.ops.readers.COCO(file_root=file_root, annotations_file='a.json')\n\n"
        "        class Micro(Pipeline):\n            def __init__(self):\n"
        "                super().__init__(batch_size=1, device_id=0, num_threads=1)\n"
        "                self.input = dali.ops.readers.COCO(file_root=file_root, annotations_file='a.json')\n\n"
        "            def define_graph(self):\n                return self.input(name='Reader')\n\n"
        "        pipe = Micro()\n        pipe.build()\n        self._size = pipe.epoch_size(name='Reader')\n",
        header="",
    )
    assert "COCOInput looks like a DALI Pipeline subclass" not in out
    assert "it is defined inside a function" in out


def test_an_iterator_over_a_pipeline_function_defined_beside_it_points_at_its_marker():
    # Andrew-Gan/sentry: the @pipeline_def function is defined in the function that makes the
    # iterator, and is not converted; no call-site marker exists to point at
    out = convert(
        "from nvidia.dali import pipeline_def\nimport nvidia.dali.fn as fn\n"
        "from nvidia.dali.plugin.pytorch import DALIGenericIterator\n\n\n"
        "def loader(root, batch):\n    @pipeline_def(num_threads=2, device_id=0)\n    def images():\n"
        "        data = fn.readers.numpy(file_root=root, device='gpu', name='Reader')\n        return data\n\n"
        "    return DALIGenericIterator([images(batch_size=batch)], ['data'], reader_name='Reader')\n",
        header="",
    )
    assert "with device= other than" in out
    assert "(its pipeline, images, is not converted: its marker says why)" in out
    assert "see the call-site marker" not in out


def test_an_ops_object_made_outside_a_pipeline_subclass_says_where_and_what_to_write():
    # solo-learn's transform classes and nnUNet's reader factory hold ops objects that pipelines
    # of other code call: the marker names the holder and the ndd operator
    out = convert(
        "import nvidia.dali.ops as ops\n\n"
        "class Jitter:\n    def __init__(self):\n        self.color = ops.ColorTwist(device='gpu')\n\n"
        "def get_reader(files):\n    return ops.readers.Numpy(files=files)\n\n"
        "FLIP = ops.Flip()\n"
    )
    assert "legacy operator ops.ColorTwist made in Jitter.__init__(): dali-migrate converts ops objects only" in out
    assert "convert it (ndd.color_twist) together with the pipeline that calls it, by hand" in out
    assert "legacy operator ops.readers.Numpy made in get_reader(): " in out and "(ndd.readers.Numpy)" in out
    assert "legacy operator ops.Flip made at module level: " in out and "(ndd.flip)" in out
    assert "not converted yet" not in out
