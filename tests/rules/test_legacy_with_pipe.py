"""``pipe = Pipeline(...)`` + ``with pipe:`` graphs (dali_migrate/legacy.py): data nodes made
before the block, sources redefined later in the file, lambda sources."""
from pathlib import Path

from _helpers import convert

HEADER = "import numpy as np\nimport nvidia.dali as dali\nimport nvidia.dali.fn as fn\nfrom nvidia.dali.pipeline import Pipeline\n"


def test_pipeline_reached_through_the_dali_module_is_converted():
    out = convert("p = dali.pipeline.Pipeline(batch_size=2, num_threads=1, device_id=None)\nwith p:\n    p.set_outputs(fn.cat(fn.constant(idata=[1]), fn.constant(idata=[2])))\np.build()\nprint(p.run())\n", header=HEADER)
    assert "def p_batches(" in out and "print(next(p))" in out


def test_constant_made_before_the_block_moves_into_the_graph():
    out = convert("c = dali.types.Constant([1, 2])\np = Pipeline(batch_size=2, num_threads=1, device_id=None)\nwith p:\n    p.set_outputs(fn.cat(c, c))\n", header=HEADER)
    graph = out.split("def p_batches(", 1)[1]
    assert "c = ndd.Batch.broadcast(ndd.tensor([1, 2], dtype=ndd.int32), batch_size)" in graph
    # nothing else reads it: the module-level pipeline-mode node goes
    assert out.count("c = ") == 1 and "dali.types" not in out


def test_node_made_before_the_block_stays_where_other_code_reads_it():
    out = convert("c = dali.types.Constant([1, 2])\np = Pipeline(batch_size=2, num_threads=1, device_id=None)\nwith p:\n    p.set_outputs(fn.cat(c, c))\nprint(c)\n", header=HEADER)
    assert "c = dali.types.Constant([1, 2])\n" in out and "c = ndd.Batch.broadcast(" in out


def test_node_made_from_a_value_changed_later_is_marked():
    out = convert("v = [0.0, 1.0]\nn = fn.random.uniform(range=v)\nv.append(2.0)\np = Pipeline(batch_size=2, num_threads=1, device_id=None)\nwith p:\n    p.set_outputs(n)\n", header=HEADER)
    assert "with p:" in out and "from `v`, which the file changes afterwards" in out


def test_node_made_from_a_module_whose_functions_the_file_calls_later_converts():
    # np.array(...) after the block calls a function of numpy: it changes no object the node holds
    out = convert("c = dali.types.Constant(np.array([1, 2], dtype=np.int32))\np = Pipeline(batch_size=2, num_threads=1, device_id=None)\n"
                  "with p:\n    p.set_outputs(fn.cat(c, c))\np.build()\nprint(np.array(p.run()[0].as_tensor()))\n", header=HEADER)
    assert "dali-migrate:" not in out and "def p_batches(" in out, out
    # a name bound by something else than an import still counts
    out = convert("import numpy as np\nnp = None\nimport numpy as np\nc = dali.types.Constant(np.array([1, 2], dtype=np.int32))\n"
                  "p = Pipeline(batch_size=2, num_threads=1, device_id=None)\nwith p:\n    p.set_outputs(fn.cat(c, c))\nnp.x = 1\n", header=HEADER)
    assert "from `np`, which the file changes afterwards" in out


def test_node_made_by_a_compound_statement_before_the_block_is_marked():
    out = convert("for k in range(2):\n    n = fn.constant(idata=[k])\np = Pipeline(batch_size=2, num_threads=1, device_id=None)\nwith p:\n    p.set_outputs(n)\n", header=HEADER)
    assert "with p:" in out and "the graph uses `n`, made before the `with` block by a statement that cannot be moved" in out


GET = "def get():\n    return [np.zeros(2)] * 2\n\n"
GRAPH = "{v} = Pipeline(batch_size=2, num_threads=1, device_id=None)\nwith {v}:\n    {v}.set_outputs(fn.external_source(source=get))\n"


def test_source_defined_again_later_is_taken_where_the_graph_is_defined():
    out = convert(GET + GRAPH.format(v="a") + "\n" + GET + GRAPH.format(v="b") + "print(next(iter([a.run(), b.run()])))\n", header=HEADER)
    assert "def a_batches(get=get, *, batch_size=2" in out and "def b_batches(get=get, *" in out
    assert out.count("the pipeline took it here") == 2


def test_source_defined_once_is_not_a_parameter():
    out = convert(GET + GRAPH.format(v="a") + "print(a.run())\n", header=HEADER)
    assert "def a_batches(*, batch_size=2" in out


def test_source_defined_again_between_pipeline_and_with_is_marked():
    src = GET + "a = Pipeline(batch_size=2, num_threads=1, device_id=None)\n" + GET + "with a:\n    a.set_outputs(fn.external_source(source=get))\nprint(a.run())\n"
    out = convert(src, header=HEADER)
    assert "with a:" in out and "is defined again between Pipeline(...) and `with`" in out


def test_source_redefined_as_something_other_than_a_function_is_marked():
    out = convert(GET + GRAPH.format(v="a") + "get = [[np.ones(2)] * 2]\nprint(a.run())\n", header=HEADER)
    assert "with a:" in out and "cannot tell whether the source `get`" in out


def test_lambda_source_is_a_callable_of_its_parameters():
    out = convert("a = Pipeline(batch_size=2, num_threads=1, device_id=None)\nwith a:\n    a.set_outputs(fn.external_source(source=lambda: [np.zeros(2)] * 2))\nprint(a.run())\n", header=HEADER)
    assert "source_2 = lambda: [np.zeros(2)] * 2\n    for source_data in map(lambda i: source_2(), itertools.count()):" in out
    out = convert("a = Pipeline(batch_size=2, num_threads=1, device_id=None)\nwith a:\n    a.set_outputs(fn.external_source(source=lambda x=1: [np.zeros(2)] * 2))\nprint(a.run())\n", header=HEADER)
    assert "with a:" in out and "the source lambda has *args or defaults" in out


def test_statement_right_after_a_graph_is_not_skipped():
    # two graphs in a row: the second Pipeline(...) directly follows the first one's `with`
    src = GRAPH.format(v="a") + GRAPH.format(v="b") + "print(a.run(), b.run())\n"
    out = convert(GET + src, header=HEADER)
    assert "def a_batches(" in out and "def b_batches(" in out and "print(next(a), next(b))" in out


def _run_script(path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_golden_with_pipe_scripts_print_the_same_after_conversion():
    # module-level pipelines (no pipeline function for golden-run): the scripts themselves are
    # run, pipeline mode against dynamic mode (CPU only)
    import pytest

    pytest.importorskip("nvidia.dali")
    golden = Path(__file__).parent.parent / "golden"
    for name in ("with_pipe_constants_before_block", "with_pipe_redefined_source"):
        before = _run_script(golden / f"{name}.py")
        after = _run_script(golden / f"{name}.expected.py")
        assert "Output" in before or "Concatenation" in before
        assert before == after, name


def test_set_outputs_right_after_the_block_is_the_graphs_end():
    # deepglint/RWKV-CLIP: the block makes the nodes, the line after it names the outputs
    out = convert("p = Pipeline(batch_size=2, num_threads=1, device_id=None)\nwith p:\n    a = fn.constant(idata=[1])\n"
                  "    b = fn.constant(idata=[2])\np.set_outputs(a, b)\np.build()\nprint(p.run())\n", header=HEADER)
    assert "def p_batches(" in out and "print(next(p))" in out and "set_outputs" not in out and "dali-migrate:" not in out


def test_set_outputs_inside_the_block_and_after_it_is_not_taken_for_the_end():
    out = convert("p = Pipeline(batch_size=2, num_threads=1, device_id=None)\nwith p:\n    a = fn.constant(idata=[1])\n"
                  "    p.set_outputs(a)\n    b = fn.constant(idata=[2])\np.set_outputs(a, b)\n", header=HEADER)
    assert "with p:" in out and "p.set_outputs(...) is not the last statement of the `with p:` block" in out


def test_why_a_with_pipeline_is_not_converted_is_said():
    for body, words in [
        ("class L:\n    def __init__(self):\n        self.pipes = [None]\n"
         "        self.pipes[0] = Pipeline(batch_size=2, num_threads=1, device_id=None)\n"
         "        with self.pipes[0]:\n            self.pipes[0].set_outputs(fn.constant(idata=[1]))\n",
         "the pipeline is kept in `self.pipes[0]`, neither a variable nor an attribute such as `self.pipe`"),
        ("p = Pipeline(batch_size=2, num_threads=1, device_id=None)\nwith p:\n    outs = (fn.constant(idata=[1]),)\n    p.set_outputs(*outs, fn.constant(idata=[2]))\n",
         "`p.set_outputs(*outs, fn.constant(idata=[2]))`: which outputs it gets cannot be seen"),
        ("p = Pipeline(batch_size=2, num_threads=1, device_id=None)\nuse(p)\n",
         "no `with p:` block follows Pipeline(...) in the same block of statements"),
        ("p = Pipeline(batch_size=2, num_threads=1, device_id=None)\nwith p:\n    a = fn.constant(idata=[1])\nprint(a)\n",
         "the `with p:` block neither ends with p.set_outputs(...) nor is followed by it"),
    ]:
        out = convert(body, header=HEADER)
        assert "not converted yet" not in out, body
        assert words in out, (body, out)


def test_two_pipelines_written_the_same_way_each_get_their_reason():
    # two functions that each make `pipe` with the very same lines, and fail for one reason
    block = ("def {f}(data_dir, seed=42):\n    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)\n    with pipe:\n"
             "        jpegs, labels = fn.readers.file(file_root=data_dir, random_shuffle=True, seed=seed)\n"
             "        pipe.set_outputs(jpegs, labels)\n    seed += 1\n    return pipe\n\n\n")
    out = convert(block.format(f="train") + block.format(f="val"), header=HEADER)
    reason = "assigns or changes after the graph is defined"
    assert out.count(reason) == 2
    assert out.index(reason) < out.index("def val(") < out.rindex(reason)


def test_a_setting_named_like_a_factory_variable_the_graph_reads_takes_another_name():
    # swinunetr: create_pipeline(..., seed=42) shuffles its reader with its own `seed`; the converted
    # function's seed parameter (the Pipeline's seed) would hide it. Only generated code calls the
    # converted function, so that parameter is renamed (tests/golden/legacy_factory_seed_parameter.py
    # checks the batches against pipeline mode).
    src = ("def make(data_dir, seed=42):\n    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)\n    with pipe:\n"
           "        jpegs, labels = fn.readers.file(file_root=data_dir, random_shuffle=True, seed=seed)\n"
           "        pipe.set_outputs(jpegs, labels)\n    return pipe\n")
    out = convert(src, header=HEADER)
    assert "dali-migrate:" not in out
    assert "device_id=None, pipeline_seed=None):" in out
    # (the reader's own seed falls back to the pipeline's where it is None: own_seed.py)
    assert "ndd.readers.File(file_root=data_dir, random_shuffle=True, seed=seed if seed is not None else pipeline_seed_or_random)" in out


_LEAK = (
    "size = 4\n\n\ndef make(d):\n    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)\n    with pipe:\n"
    "        jpegs, labels = fn.readers.file(file_root=d)\n        size = 8\n"
    "        pipe.set_outputs(fn.resize(fn.decoders.image(jpegs), resize_x=size), labels)\n"
    "{after}    return pipe\n"
)


def test_a_name_the_graph_binds_and_later_code_reads_keeps_the_pipeline():
    # converted, `size = 8` would be local to the graph's function: print(size) would print 4
    for after in ("    print(size)\n", "    if d:\n        print(size)\n", "    def show():\n        return size\n"):
        out = convert(_LEAK.format(after=after), header=HEADER)
        assert "`size` is bound in the `with pipe:` graph and read after it" in out, after
        assert "with pipe:" in out


def test_a_name_the_graph_binds_and_later_code_binds_again_converts():
    # a second graph (or any code) that binds the name again before reading it reads its own
    for after in ("    size = 16\n    print(size)\n", "    for size in range(2):\n        print(size)\n"):
        out = convert(_LEAK.format(after=after), header=HEADER)
        assert "dali-migrate:" not in out, (after, out)
        assert "def pipe_batches(" in out


def test_a_name_the_graph_binds_read_by_an_elif_test_keeps_the_pipeline():
    out = convert(_LEAK.format(after="    if not d:\n        pass\n    elif size > 4:\n        print(d)\n"), header=HEADER)
    assert "`size` is bound in the `with pipe:` graph and read after it" in out


def test_node_made_again_between_pipeline_and_with_drops_the_first_one():
    # insightface's dali_data_iter(): `condition_flip` is made before Pipeline(...) and again
    # between Pipeline(...) and `with`; the graph uses the second one, the first was never used
    # (the pipeline never ran it), and a pipeline-mode call left in converted code would be noise
    src = (
        "def loader(root):\n"
        "    flip = fn.random.coin_flip(probability=0.9)\n"
        "    p = Pipeline(batch_size=2, num_threads=1, device_id=None)\n"
        "    flip = fn.random.coin_flip(probability=0.5)\n"
        "    with p:\n"
        "        jpegs, labels = fn.readers.file(file_root=root)\n"
        "        p.set_outputs(fn.flip(fn.decoders.image(jpegs), horizontal=flip), labels)\n"
        "    return p\n"
    )
    out = convert(src, header=HEADER)
    graph = out.split("def p_batches(", 1)[1]
    assert "flip = ndd.random.coin_flip(probability=0.5, " in graph and "probability=0.9" not in graph
    assert "probability=0.9" not in out and "fn.random" not in out and "dali-migrate:" not in out
    assert convert(out, header="") == out  # a second run writes nothing more
    # read in between: it was used, and it stays (its value printed as the pipeline-mode node it is)
    used = src.replace("    p = Pipeline(", "    print(flip)\n    p = Pipeline(")
    assert "    flip = fn.random.coin_flip(probability=0.9)\n    print(flip)" in convert(used, header=HEADER)


FACTORY_ARGS = '''
import argparse
from nvidia.dali import fn
from nvidia.dali.pipeline import Pipeline


def make(args, shard_id):
    pipe = Pipeline(batch_size=args.batch_size, num_threads=2, device_id=None, seed=7)
    with pipe:
        jpegs, labels = fn.readers.file(file_root=args.root, shard_id=shard_id, num_shards=2)
        images = fn.decoders.image(jpegs, device="cpu")
        images = fn.resize(images, resize_x=args.crop, resize_y=args.crop)
        pipe.set_outputs(images, labels)
    return pipe


def main(root):
    args = argparse.Namespace(batch_size=4, crop=8, root=root)
    train = make(args, 0)
    {between}
    val = make(args, 1)
    train.build()
    val.build()
    return [(train.run()[0].at(0).shape, val.run()[0].at(0).shape) for _ in range(2)]
'''


def test_an_argument_of_a_factory_changed_in_place_after_it_made_the_pipeline_is_marked():
    """The graph read args.crop when make() built it (train: 8x8); the converted generator reads
    it at every iteration, after `args.crop = 16` (16x16)."""
    from dali_migrate.engine import convert_source

    for between in ("args.crop = 16", "args.__dict__.update(crop=16)"):
        r = convert_source(FACTORY_ARGS.format(between=between))
        assert any("`args` is given to make(), which makes the pipeline, and changed in place afterwards" in m.reason
                   for m in r.markers), (between, r.output)


def test_the_factory_with_a_new_namespace_for_the_second_pipeline_converts(tmp_path, fixture_data):
    from _helpers import run_both
    from dali_migrate.engine import convert_source

    src = FACTORY_ARGS.format(between="args = argparse.Namespace(batch_size=4, crop=16, root=root)")
    out = convert_source(src).output
    assert "dali-migrate:" not in out, out
    want, got = run_both(tmp_path, src, out, "main", str(fixture_data / "images"))
    assert want == got and want[0] == ((8, 8, 3), (16, 16, 3)), (want, got)


def test_a_graph_left_as_written_keeps_its_set_outputs_after_the_block():
    # the conversion tries the block with `pipe.set_outputs(...)` taken in; a graph that then does
    # not convert is left exactly as written, set_outputs after the block included
    src = (
        "from nvidia.dali.plugin.pytorch import DALIGenericIterator\n\n\n"
        "def make(root):\n    pipe = Pipeline(batch_size=2, num_threads=1, device_id=0)\n    with pipe:\n"
        "        jpegs, labels = fn.readers.file(file_root=root, name='R')\n"
        "        images = fn.decoders.image(jpegs, device='mixed')\n    pipe.set_outputs(images, labels)\n"
        "    pipe.build()\n    return DALIGenericIterator([pipe], ['a', 'b'], reader_name='nope')\n"
    )
    out = convert(src, header=HEADER)
    assert "cannot match the name to the pipeline's reader" in out
    assert "        images = fn.decoders.image(jpegs, device='mixed')\n    pipe.set_outputs(images, labels)\n" in out


def test_set_outputs_of_an_unpacked_list_gives_each_item_as_an_output():
    # DALI's resize notebook and NVIDIA's loaders: `pipe.set_outputs(*out)` over a list the graph made
    from _helpers import convert

    out = convert(
        "from nvidia.dali.pipeline import Pipeline\n\n"
        "def make(root):\n    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)\n    with pipe:\n"
        "        j, l = fn.readers.file(file_root=root)\n        out = [fn.decoders.image(j), l]\n"
        "        pipe.set_outputs(*out)\n    return pipe\n")
    assert "outputs = tuple(out)" in out and "dali-migrate:" not in out
