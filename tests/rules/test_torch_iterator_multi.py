"""torch-iterator over several pipelines (pipe_lists.py): what converts and what stays marked."""

import textwrap

from dali_migrate.engine import convert_source

HEADER = """\
from nvidia.dali import fn, pipeline_def
from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy
from nvidia.dali.plugin import jax as dali_jax


@pipeline_def(batch_size=4)
def pipe_fn(root, shard_id=0, num_shards=1):
    jpegs, labels = fn.readers.file(file_root=root, shard_id=shard_id, num_shards=num_shards, name="Reader")
    return jpegs, labels


@pipeline_def(batch_size=4)
def pipe_b(root):
    jpegs, labels = fn.readers.file(file_root=root, name="Reader")
    return jpegs, labels


"""


def run(body: str):
    result = convert_source(HEADER + "def main(root, n, other):\n" + textwrap.indent(textwrap.dedent(body), "    "))
    return result.output, [m.reason for m in result.markers]


def test_comprehension_list_converts_with_each_elements_reader():
    out, reasons = run("""
        pipes = [pipe_fn(root, shard_id=i, num_shards=n, device_id=i) for i in range(n)]
        pipes[1].build()
        size = pipes[1].epoch_size("Reader")
        loader = DALIGenericIterator(pipes, ["x", "y"], reader_name="Reader")
    """)
    assert reasons == []
    assert "pipes[1].build()" not in out
    assert 'size = ndd.readers.File(file_root=root, shard_id=1, num_shards=n).get_metadata()["epoch_size_padded"]' in out
    assert ("loader = DaliTorchMultiIterator(pipes, [\"x\", \"y\"], batch_size=4, reader_meta=[ndd.readers.File("
            "file_root=root, shard_id=i, num_shards=n).get_metadata() for i in range(n)])") in out
    assert "class DaliTorchMultiIterator:" in out and "class DaliTorchIterator:" not in out


def test_element_of_a_range_with_a_start_and_of_a_written_list():
    out, reasons = run("""
        pipes = [pipe_fn(root, shard_id=i, num_shards=3) for i in range(1, 3)]
        size = pipes[1].epoch_size("Reader")
        loader = DALIGenericIterator(pipes, ["x", "y"], size=size)
        pipes2 = [pipe_fn(root, shard_id=s, num_shards=3) for s in [2, 0]]
        size2 = pipes2[0].epoch_size("Reader")
        loader2 = DALIGenericIterator(pipes2, ["x", "y"], size=size2)
    """)
    assert reasons == []
    assert "shard_id=2, num_shards=3).get_metadata()" in out.split("\n    size = ")[1].splitlines()[0]
    assert "shard_id=2, num_shards=3).get_metadata()" in out.split("\n    size2 = ")[1].splitlines()[0]


def test_two_variables_in_a_list_convert_together():
    out, reasons = run("""
        a = pipe_fn(root, 0, 2)
        b = pipe_fn(root, 1, 2)
        loader = DALIGenericIterator([a, b], ["x", "y"], reader_name="Reader", last_batch_policy=LastBatchPolicy.DROP)
    """)
    assert reasons == []
    assert ('DaliTorchMultiIterator([a, b], ["x", "y"], batch_size=4, reader_meta=[ndd.readers.File(file_root=root, '
            'shard_id=0, num_shards=2).get_metadata(), ndd.readers.File(file_root=root, shard_id=1, num_shards=2)'
            '.get_metadata()], last_batch_policy="DROP")') in out


def test_one_iterator_over_a_converted_and_an_unconverted_pipeline_leaves_both():
    out, reasons = run("""
        a = pipe_fn(root)
        b = pipe_b(root)
        loader = DALIGenericIterator([a, b], ["x", "y"], size=8)
        other.append(b)
    """)
    assert "DALIGenericIterator([a, b]" in out and "DaliTorch" not in out
    assert "def pipe_fn(root, shard_id=0, num_shards=1):\n    jpegs" in out and "def pipe_b(root):\n    jpegs" in out
    assert any("given to one iterator with pipeline pipe_b" in r for r in reasons), reasons


def test_a_list_element_that_is_not_a_pipeline():
    out, reasons = run("""
        a = pipe_fn(root)
        loader = DALIGenericIterator([a, other], ["x", "y"], size=8)
    """)
    assert "DaliTorch" not in out
    assert any("not a pipeline variable" in r for r in reasons), reasons


def test_uses_of_the_list_that_are_not_followed_are_marked():
    for use, words in [
        ("out = pipes[0].run()", "used here in a way"),
        ("for p in pipes:\n    p.run()", "used here in a way"),
        ("other(pipes)", "used here in a way"),
        ("pipes = []", "assigned more than once"),
        ("pipes[n].build()", "used here in a way"),
    ]:
        out, reasons = run("pipes = [pipe_fn(root, shard_id=i, num_shards=2) for i in range(2)]\n" + use + "\n"
                           "loader = DALIGenericIterator(pipes, ['x', 'y'], reader_name='Reader')\n")
        assert "DaliTorch" not in out and "@pipeline_def" in out, use
        assert any(words in r for r in reasons), (use, reasons)


def test_comprehensions_not_followed():
    for comp, words in [
        ("[pipe_fn(root, shard_id=i, num_shards=2) for i in devices()]", "iterable"),
        ("[pipe_fn(root, shard_id=i, num_shards=2) for i in range(2) if i]", "comprehension"),
        ("[pipe_fn(root, shard_id=i, num_shards=2, batch_size=i + 1) for i in range(2)]", "batch size"),
    ]:
        out, reasons = run(f"pipes = {comp}\nloader = DALIGenericIterator(pipes, ['x', 'y'], reader_name='Reader')\n")
        assert "DaliTorch" not in out, comp
        assert any(words in r for r in reasons), (comp, reasons)


def test_an_element_index_the_code_does_not_tell():
    out, reasons = run("""
        pipes = [pipe_fn(root, shard_id=i, num_shards=3) for i in range(n, 3)]
        size = pipes[0].epoch_size("Reader")
    """)
    assert any("cannot tell which pipeline" in r for r in reasons), reasons


def test_jax_iterator_over_several_pipelines_gets_the_jax_multi_class():
    out, reasons = run("""
        pipes = [pipe_fn(root, shard_id=i, num_shards=2) for i in range(2)]
        loader = dali_jax.DALIGenericIterator(pipes, ["x", "y"], reader_name="Reader")
    """)
    assert reasons == []
    assert "loader = DaliJaxMultiIterator(pipes, " in out and "class DaliTorchMultiIterator" not in out


def test_one_pipeline_still_gets_the_single_pipeline_class():
    out, reasons = run("""
        pipe = pipe_fn(root)
        loader = DALIGenericIterator([pipe], ["x", "y"], reader_name="Reader")
    """)
    assert reasons == []
    assert "DaliTorchIterator(pipe, " in out and "class DaliTorchMultiIterator" not in out


def test_the_marker_quotes_the_use_it_cannot_follow_and_says_it_once():
    # a legacy class's reasons are marked on the class, far from the use: the use is quoted
    body = "pipes = [pipe_fn(root, shard_id=i, num_shards=2) for i in range(2)]\nreturn DataLayer(pipes, n)\n"
    out, reasons = run(body)
    assert any("used here in a way dali-migrate cannot follow (`return DataLayer(pipes, n)`)" in r for r in reasons), reasons
    again = convert_source(out)
    assert again.output == out


LOADER_CLASS = """

class Loader:
    def __init__(self, pipelines, size):
        self.it = DALIGenericIterator(pipelines, ["x", "y"], size{args})
"""


def run_handed(body: str, module_code: str):
    source = HEADER + "def main(root, n, other):\n" + textwrap.indent(textwrap.dedent(body), "    ") + textwrap.dedent(module_code)
    result = convert_source(source)
    return result.output, [m.reason for m in result.markers]


def test_list_handed_to_a_class_that_makes_the_iterator_converts_without_a_batch_size():
    out, reasons = run_handed("""
        pipes = [pipe_fn(root, shard_id=i, num_shards=n) for i in range(n)]
        return Loader(pipes, 13)
    """, LOADER_CLASS.format(args=", last_batch_policy=LastBatchPolicy.DROP"))
    assert reasons == []
    assert 'self.it = DaliTorchMultiIterator(pipelines, ["x", "y"], size=size, last_batch_policy="DROP")' in out
    assert "*, batch_size=None, reader_meta=None" in out and "self._drawn = [next(pipe) for pipe in self._pipes]" in out
    assert "return Loader(pipes, 13)" in out and "@pipeline_def" not in out


def test_list_handed_to_a_function_converts_and_a_local_list_keeps_its_batch_size():
    out, reasons = run_handed("""
        pipes = [pipe_fn(root, shard_id=i, num_shards=n) for i in range(n)]
        return make_loader(pipes)
    """, """

    def make_loader(pipelines):
        return DALIGenericIterator(pipelines, ["x", "y"], size=8 * len(pipelines))
    """)
    assert reasons == []
    assert 'return DaliTorchMultiIterator(pipelines, ["x", "y"], size=8 * len(pipelines))' in out
    local, reasons = run("""
        pipes = [pipe_fn(root, shard_id=i, num_shards=n) for i in range(n)]
        loader = DALIGenericIterator(pipes, ["x", "y"], size=8)
    """)
    assert reasons == [] and "batch_size=None" not in local and "_drawn" not in local


def test_handed_lists_left_with_a_marker():
    loader = LOADER_CLASS.format(args="")
    for body, module_code, words in [
        ("pipes = [pipe_fn(root, shard_id=i, num_shards=n) for i in range(n)]\nreturn Loader(pipes, 13)\n",
         LOADER_CLASS.format(args=', reader_name="Reader"').replace(", size", ""), "not visible here"),
        ("pipes = [pipe_fn(root, shard_id=i, num_shards=n) for i in range(n)]\nreturn Loader(pipes, 13)\n",
         LOADER_CLASS.format(args=", prepare_first_batch=False"), "prepare_first_batch"),
        ("pipes = [pipe_fn(root, shard_id=i, num_shards=n) for i in range(n)]\nreturn Loader(pipes, 13), Loader(other, 13)\n",
         loader, "used elsewhere too"),
        ("pipes = [pipe_fn(root, shard_id=i, num_shards=n) for i in range(n)]\nreturn Loader(pipes, 13)\n",
         loader + "        self.pipelines = pipelines\n", "`pipelines`, which gets the pipelines `pipes`"),
        ("pipes = [pipe_fn(root, shard_id=i, num_shards=n) for i in range(n)]\nreturn Loader(pipes, 13)\n",
         loader.replace("        self.it", "        pipelines = list(pipelines)\n        self.it"), "assigns its parameter"),
        ("pipes = [pipe_fn(root, shard_id=i, num_shards=n) for i in range(n)]\nreturn Loader(pipes, 13)\n",
         loader.replace("class Loader:", "class Loader(Base):"), "base class"),
    ]:
        out, reasons = run_handed(body, module_code)
        assert "DaliTorch" not in out and "@pipeline_def" in out, (words, out)
        assert any(words in r for r in reasons), (words, reasons)


def test_jax_iterator_made_by_a_function_the_list_is_handed_to():
    out, reasons = run_handed("""
        pipes = [pipe_fn(root, shard_id=i, num_shards=2) for i in range(2)]
        return make_loader(pipes)
    """, """

    def make_loader(pipelines):
        return dali_jax.DALIGenericIterator(pipelines, ["x", "y"], size=16)
    """)
    assert reasons == []
    assert 'return DaliJaxMultiIterator(pipelines, ["x", "y"], size=16)' in out
    assert "class DaliJaxMultiIterator:" in out and "*, batch_size=None, reader_meta=None" in out


def test_a_handed_list_and_a_local_list_share_the_class_that_serves_both():
    # the class that reads the batch size from the data also takes batch_size=: it alone is
    # added, whichever use comes first (the plain one would leave the handed call without one)
    handed = "pipes = [pipe_fn(root, shard_id=i, num_shards=n) for i in range(n)]\nloader = make_loader(pipes)\n"
    local = "local = [pipe_b(root) for i in range(n)]\nit = DALIGenericIterator(local, ['x', 'y'], size=8)\n"
    for body in (handed + local, local + handed):
        out, reasons = run_handed(body + "return loader, it\n", """

        def make_loader(pipelines):
            return DALIGenericIterator(pipelines, ["x", "y"], size=8 * len(pipelines))
        """)
        assert reasons == []
        assert out.count("class DaliTorchMultiIterator") == 1
        assert "*, batch_size=None, reader_meta=None" in out
        assert "it = DaliTorchMultiIterator(local, ['x', 'y'], batch_size=4, size=8)" in out
        assert 'return DaliTorchMultiIterator(pipelines, ["x", "y"], size=8 * len(pipelines))' in out
        compile(out, "<converted>", "exec")


def test_a_loop_that_only_builds_the_comprehensions_pipelines_goes():
    # DALI's multi-GPU examples: `for pipe in pipes: pipe.build()` before the iterator
    out, reasons = run("""
        pipes = [pipe_fn(root, shard_id=i, num_shards=n, device_id=i) for i in range(n)]
        for pipe in pipes:
            pipe.build()
        loader = DALIGenericIterator(pipes, ["x", "y"], reader_name="Reader")
    """)
    assert reasons == []
    assert "for pipe in pipes" not in out and ".build()" not in out
    assert "loader = DaliTorchMultiIterator(pipes," in out


def test_a_build_loop_whose_variable_is_read_later_stays():
    # after the loop `pipe` is the last pipeline: the loop cannot go
    out, reasons = run("""
        pipes = [pipe_fn(root, shard_id=i, num_shards=n, device_id=i) for i in range(n)]
        for pipe in pipes:
            pipe.build()
        loader = DALIGenericIterator(pipes, ["x", "y"], reader_name="Reader")
        print(pipe)
    """)
    assert any("which loops over the pipelines `pipes` bind, is used here too" in r for r in reasons)
    assert "for pipe in pipes:" in out


def test_a_loop_that_does_more_than_build_stays():
    out, reasons = run("""
        pipes = [pipe_fn(root, shard_id=i, num_shards=n, device_id=i) for i in range(n)]
        for pipe in pipes:
            pipe.build()
            pipe.run()
        loader = DALIGenericIterator(pipes, ["x", "y"], reader_name="Reader")
    """)
    assert any("the list of pipelines `pipes` is used here in a way dali-migrate cannot follow" in r for r in reasons)
    assert "for pipe in pipes:" in out
