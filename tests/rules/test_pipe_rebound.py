"""One variable holding several pipelines in turn, as notebooks write them (dali_migrate/call_sites.py:
_nodes_while_bound, _outputs_while_bound, _owner; legacy.Legacy.find_anchor): each binding of `pipe`,
and the outputs kept from it, are that binding's until the next one."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
from _helpers import convert

HEADER = (
    "import numpy as np\nimport nvidia.dali.fn as fn\nimport nvidia.dali.types as types\n"
    "from nvidia.dali import pipeline_def\nfrom nvidia.dali.pipeline import Pipeline\n"
)
#: what stays a pipeline: a typed constant in GPU arithmetic (rules/constant.py marks it)
LEFT = "fn.external_source(source=lambda: [np.int32([1])] * 2).gpu() * types.Constant(3, dtype=types.INT64)"
PIPES = (
    "@pipeline_def(batch_size=2, num_threads=1, device_id=None)\ndef plus():\n    return fn.external_source(source=lambda: [np.int32([1])] * 2) + 1\n\n"
    "@pipeline_def(batch_size=2, num_threads=1, device_id=None)\ndef times():\n    return fn.external_source(source=lambda: [np.int32([1])] * 2) * 2\n\n"
)


def _markers(out: str) -> list:
    return [line.strip() for line in out.splitlines() if line.strip().startswith("# dali-migrate:")]


def test_outputs_kept_from_each_binding_convert():
    src = PIPES + "pipe = plus()\npipe.build()\nout = pipe.run()\nprint(out[0].as_array())\n\npipe = times()\npipe.build()\nout = pipe.run()\nprint(out[0].at(1))\n"
    out = convert(src, header=HEADER)
    assert _markers(out) == []
    assert "out = next(pipe)\nprint(np.array(ndd.as_tensor(out[0])))" in out and "print(np.array(out[0].select(1)))" in out


def test_outputs_read_after_the_variable_is_bound_again_are_marked():
    src = PIPES + "pipe = plus()\nout = pipe.run()\npipe = times()\nprint(out[0].as_array())\nout = pipe.run()\n"
    out = convert(src, header=HEADER)
    assert "`out` may still hold outputs of the pipeline `pipe` held before it was assigned again: convert by hand\n" in out
    assert "`out` may not hold outputs of the pipeline in `pipe` yet here" in out
    assert out.splitlines()[-2:] == ["print(out[0].as_array())", "out = pipe.run()"]
    assert out.count("@pipeline_def") == 2  # `out` is one name for both: neither converts alone


def test_outputs_read_before_this_binding_made_them_are_marked():
    src = PIPES + "pipe = plus()\nout = pipe.run()\npipe = times()\nif len(out):\n    out = pipe.run()\nprint(out[0].as_array())\n"
    out = convert(src, header=HEADER)
    assert "`out` may not hold outputs of the pipeline in `pipe` yet here" in out


def test_outputs_kept_when_the_variable_is_bound_in_a_loop_are_marked():
    src = PIPES + "for _ in range(2):\n    pipe = plus()\n    out = pipe.run()\n    pipe = times()\n    print(out[0].as_array())\n"
    out = convert(src, header=HEADER)
    assert "`pipe` is assigned more than once and its outputs are kept in variables: convert by hand" in out


def test_one_binding_left_does_not_keep_the_others():
    # the outputs of each binding are followed only until the next one: a pipeline left to a person
    # in between shares the name `out`, not the uses
    left = f"@pipeline_def(batch_size=2, num_threads=1, device_id=None)\ndef odd():\n    return {LEFT}\n\n"
    src = PIPES + left + "pipe = plus()\nout = pipe.run()\nprint(out[0].as_array())\npipe = odd()\nout = pipe.run()\nprint(out[0].as_cpu().as_array())\npipe = times()\nout = pipe.run()\nprint(out[0].as_array())\n"
    out = convert(src, header=HEADER)
    assert out.count("@pipeline_def") == 1 and "def plus(*," in out and "def times(*," in out
    assert "pipe = odd()\n" in out and "out = pipe.run()\nprint(out[0].as_cpu().as_array())" in out


def test_bindings_at_the_top_and_in_loops_each_own_their_uses():
    # DALI's expr_type_promotions: `pipe = make(...)` in a cell, then in loops over the cases
    src = PIPES + (
        "def show(pipe):\n    pipe.build()\n    print(pipe.run()[0].as_array())\n\n"
        "pipe = plus()\nshow(pipe)\nfor k in range(2):\n    for j in range(2):\n        pipe = plus()\n        show(pipe)\n"
        "for k in range(2):\n    pipe = plus()\n    show(pipe)\n"
    )
    out = convert(src, header=HEADER)
    assert _markers(out) == [] and "pipe.build()" not in out and out.count("    show(pipe)\n") == 2


def test_a_use_after_a_loop_that_binds_the_variable_is_marked():
    src = PIPES + "pipe = plus()\nfor k in range(2):\n    pipe = times()\n    pipe.run()\npipe.run()\n"
    out = convert(src, header=HEADER)
    assert "`pipe` is assigned more than once: dali-migrate cannot follow which pipeline it holds" in out


def test_a_use_at_the_top_of_a_loop_that_binds_the_variable_later_is_marked():
    src = PIPES + "pipe = plus()\npipe.build()\nfor k in range(2):\n    pipe.run()\n    pipe = times()\n    pipe.build()\n"
    out = convert(src, header=HEADER)
    assert "`pipe` is assigned more than once: dali-migrate cannot follow which pipeline it holds" in out


def test_outputs_unpacked_by_zip_are_batches():
    src = PIPES + "pipe = plus()\nfor name, batch in zip(['a'], pipe.run()):\n    print(name, batch.as_array())\n"
    out = convert(src, header=HEADER)
    assert _markers(out) == [] and "for name, batch in zip(['a'], next(pipe)):\n    print(name, np.array(ndd.as_tensor(batch)))" in out


def test_outputs_given_to_a_builtin_whose_result_is_not_followed_are_marked():
    src = PIPES + "pipe = plus()\nfirst = list(pipe.run())[0]\nprint(first.as_array())\n"
    out = convert(src, header=HEADER)
    assert "pipeline outputs are passed to list(), whose result dali-migrate does not follow: convert by hand" in out


def test_with_pipe_marker_goes_on_its_own_graph_when_the_lines_are_the_same():
    # notebooks repeat `pipe = Pipeline(...)` word for word: each marker belongs to its own graph
    graph = "pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)\nwith pipe:\n    pipe.set_outputs({})\npipe.build()\nout = pipe.run()\n"
    src = graph.format(LEFT) + graph.format("fn.constant(idata=[1], dtype=types.FLOAT64)")
    out = convert(src, header=HEADER)
    first, second = out.split("with pipe:")[:2]
    assert first.splitlines()[-2].startswith("# dali-migrate: [legacy-pipeline] not converted: types.Constant(...)")
    assert second.splitlines()[-2].startswith("# dali-migrate: [legacy-pipeline] not converted: fn.constant(...) not converted: fn.constant does not support FLOAT64")
    assert len(_markers(out)) == 2


# -- the golden scripts run: module-level pipelines have no function for golden-run -----------------

GOLDEN = Path(__file__).parent.parent / "golden"
NOTEBOOKS = Path(__file__).parent.parent / "golden_notebooks"


def _printed(source: str, tmp_path: Path, name: str) -> str:
    from dali_migrate.device_cpu import to_cpu

    path = tmp_path / f"{name}.py"
    path.write_text(to_cpu(source), encoding="utf-8")
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("case", ["with_pipe_rebound_outputs", "with_pipe_passed_operation"])
def test_golden_scripts_print_the_same_after_conversion(case, tmp_path):
    pytest.importorskip("nvidia.dali")
    before = _printed((GOLDEN / f"{case}.py").read_text(), tmp_path, "before")
    after = _printed((GOLDEN / f"{case}.expected.py").read_text(), tmp_path, "after")
    assert "int32" in before and before == after


def test_golden_notebook_prints_the_same_after_conversion(tmp_path):
    pytest.importorskip("nvidia.dali")

    def code(path):
        cells = json.loads(path.read_text())["cells"]
        return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code") + "\n"

    before = _printed(code(NOTEBOOKS / "pipelines_rebound_per_cell.ipynb"), tmp_path, "before")
    after = _printed(code(NOTEBOOKS / "pipelines_rebound_per_cell.expected.ipynb"), tmp_path, "after")
    assert "10 -" in before and before == after
