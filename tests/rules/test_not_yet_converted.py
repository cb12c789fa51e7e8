from _helpers import convert


def test_pipeline_subclass_that_cannot_convert_is_marked_once_with_the_reason():
    out = convert(
        "import nvidia.dali.ops as ops\nfrom nvidia.dali.pipeline import Pipeline\n"
        "class P(Pipeline):\n    def __init__(self):\n        super().__init__(2, 1, 0)\n        self.r = ops.readers.File(file_root='d')\n"
        "    def define_graph(self):\n        return self.r()\n    def iter_setup(self):\n        pass\n"
    )
    assert out.count("# dali-migrate:") == 1
    assert "[legacy-pipeline] not converted: the class also defines iter_setup()" in out
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
        "def aug(x):\n    return fn.flip(x)\n\n@pipeline_def(batch_size=2)\ndef p():\n    j, l = fn.readers.file(file_root='d')\n    return aug(fn.decoders.image(j)), l\n"
    )
    assert "aug() builds DALI operators with fn.*" in out
    assert "calls aug(), which builds DALI operators itself" in out
    assert "@pipeline_def" in out
