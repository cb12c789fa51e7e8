"""dali_migrate/hidden_globals.py: a module's variable that a setting's parameter would hide is read
through globals() where that is certainly the variable the pipeline read."""

import textwrap

import libcst as cst
from _helpers import convert

from dali_migrate import hidden_globals
from dali_migrate.dali_imports import collect

HEAD = "import numpy as np\nimport nvidia.dali.fn as fn\nimport nvidia.dali.types as types\nfrom nvidia.dali import pipeline_def\n"


def _module(body: str, batch_size: str = "batch_size = 2\n") -> str:
    return HEAD + batch_size + textwrap.dedent(body)


def _rewritten(src: str) -> tuple:
    module = cst.parse_module(src)
    new, done = hidden_globals.rewrite(module, collect(module), set())
    return new.code, done


SOURCE = """
class Reader:
    def __init__(self, n, root):
        self.n = n

    def __iter__(self):
        return self

    def __next__(self):
        return [np.zeros(3, dtype=np.uint8)] * self.n


@pipeline_def(batch_size=8, seed=3)
def p(root):
    data = fn.external_source(source=Reader(batch_size, root), dtype=types.UINT8)
    return fn.cast(data, dtype=types.FLOAT) * batch_size
"""


def test_reads_in_setup_and_loop_go_through_globals():
    out = convert(_module(SOURCE), header="")
    assert "dali-migrate:" not in out
    assert 'Reader(globals()["batch_size"], root)' in out
    # read where the other module variables are read: in the loop, not evaluated once into a name
    assert 'ndd.cast(data, dtype=types.FLOAT) * globals()["batch_size"]' in out
    assert "def p(root, *, batch_size=8," in out


def test_only_the_hidden_setting_is_rewritten():
    code, done = _rewritten(_module(SOURCE.replace("batch_size,", "seed,"), batch_size="batch_size = 2\nseed = 5\n"))
    assert done == {"p": ["batch_size", "seed"]}
    assert 'Reader(globals()["seed"], root)' in code and '* globals()["batch_size"]' in code
    # a pipeline whose setting has no module variable to read: nothing to do
    assert _rewritten(HEAD + SOURCE.replace("batch_size", "n"))[1] == {}


def test_a_lambda_reads_the_enclosing_name_unless_it_binds_it():
    reads = "    data = fn.external_source(source=lambda: [np.zeros(batch_size)] * 2)\n    return data\n"
    code, done = _rewritten(_module("@pipeline_def(batch_size=8)\ndef p():\n" + reads))
    assert done == {"p": ["batch_size"]} and 'np.zeros(globals()["batch_size"])' in code
    own = "    data = fn.external_source(source=lambda batch_size=1: [np.zeros(batch_size)] * 2)\n    return data\n"
    assert _rewritten(_module("@pipeline_def(batch_size=8)\ndef p():\n" + own))[1] == {}


def test_names_that_may_not_be_the_modules_are_left_with_the_marker():
    nested = """
    @pipeline_def(batch_size=8)
    def p():
        def shape():
            return [batch_size]
        return fn.random.uniform(shape=shape())
    """
    comprehension = """
    @pipeline_def(batch_size=8)
    def p():
        sizes = [batch_size for batch_size in range(batch_size)]
        return fn.random.uniform(shape=sizes)
    """
    unbound = """
    @pipeline_def(batch_size=8)
    def p():
        return fn.random.uniform(shape=[batch_size])
    """
    own_globals = textwrap.dedent(unbound) + "\n\ndef globals():\n    return {}\n"
    for src in (_module(nested), _module(comprehension), _module(unbound, batch_size=""), _module(own_globals)):
        assert _rewritten(src)[1] == {}
        out = convert(src, header="")
        assert "globals()[" not in out
        assert "the pipeline reads `batch_size` from outside it" in out


def test_a_pipeline_that_does_not_convert_is_put_back_as_written():
    src = _module(SOURCE.replace("seed=3", 'output_layout="HWC"'))
    out = convert(src, header="")
    assert "source=Reader(batch_size, root)" in out and "globals()" not in out
    assert "output_layout= changes the outputs' layouts" in out
    assert "the pipeline reads `batch_size` from outside it" in out


def test_a_pipeline_module_variable_the_same_as_the_setting_is_read_by_name():
    # pipeline_analysis._same_outside: the parameter always holds what the module's variable does
    src = HEAD + "batch_size = 8\n" + textwrap.dedent(SOURCE) + "\npipe = p('d')\n"
    out = convert(src, header="")
    assert "globals()" not in out and "Reader(batch_size, root)" in out
