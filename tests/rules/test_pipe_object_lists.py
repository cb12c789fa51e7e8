"""Lists written out of pipeline variables that loops only get ready
(pipe_lists.plan_object_list): ``for pipe in pipelines: pipe.build()`` goes with its calls; any
other use of the list or of the loop's variable leaves the pipelines to a person."""

from __future__ import annotations

from dali_migrate.engine import convert_source

HEAD = (
    "import numpy as np\n"
    "from nvidia.dali import fn, pipeline_def\n\n\n"
    "def sample(info):\n"
    "    return np.full((2,), info.idx_in_epoch, dtype=np.int32)\n\n\n"
    "@pipeline_def(batch_size=4, py_num_workers=2)\n"
    "def train_fn():\n"
    "    return fn.external_source(sample, batch=False, parallel=True)\n\n\n"
    "@pipeline_def(batch_size=4, py_num_workers=2)\n"
    "def val_fn():\n"
    "    return fn.external_source(sample, batch=False, parallel=True) + 1\n\n\n"
    "def main(other):\n"
    "    train_pipe = train_fn()\n"
    "    val_pipe = val_fn()\n"
)

READY = (
    "pipelines = [train_pipe, val_pipe]\n"
    "for pipe in pipelines:\n"
    "    pipe.start_py_workers()\n"
    "for pipe in pipelines:\n"
    "    pipe.build()\n"
)


def _convert(body: str):
    return convert_source(HEAD + "".join(f"    {line}\n" for line in body.splitlines()))


def _reasons(result) -> str:
    return "\n".join(m.reason for m in result.markers)


def test_loops_go_and_the_list_stays():
    result = _convert(READY + "out = train_pipe.run()\nval = val_pipe.run()\n")
    assert not result.markers, result.output
    out = result.output
    assert "    pipelines = [train_pipe, val_pipe]\n    out = next(train_pipe)\n    val = next(val_pipe)\n" in out
    assert "for pipe in" not in out and "@pipeline_def" not in out


def test_a_tuple_and_one_loop_doing_both():
    result = _convert("pipes = (train_pipe, val_pipe)\nfor p in pipes:\n    p.start_py_workers()\n    p.build()\nout = train_pipe.run()\n")
    assert not result.markers, result.output
    assert "for p in" not in result.output and "next(train_pipe)" in result.output


MARKED = {
    "another statement in the loop": (
        READY + "for pipe in pipelines:\n    print(pipe.run())\n",
        "is used here other than by a loop `for pipe in pipelines:` whose every statement is"),
    "the list passed on": (READY + "other(pipelines)\n", "is used here other than by a loop"),
    "something else in the list": (
        "pipelines = [train_pipe, val_pipe, other]\nfor pipe in pipelines:\n    pipe.build()\n",
        "the list `pipelines` holds `other`, which is not a variable assigned once from a pipeline call here"),
    "the loop variable read after the loop": (READY + "last = pipe\n", "`pipe`, which loops over the pipelines `pipelines` bind, is used here too"),
    "the list assigned twice": (READY + "pipelines = []\n", "`pipelines` is assigned more than once"),
    "a loop with else": (
        "pipelines = [train_pipe, val_pipe]\nfor pipe in pipelines:\n    pipe.build()\nelse:\n    pass\n",
        "is used here other than by a loop"),
}


def test_marked():
    for key, (body, reason) in MARKED.items():
        result = _convert(body)
        assert reason in _reasons(result), (key, result.output)
        assert result.output.count("@pipeline_def") == 2, key


def test_converted_together_or_not_at_all():
    # val_pipe's own use cannot be followed: train_pipe, listed with it, stays too (the loops serve both)
    result = _convert(READY + "out = train_pipe.run()\nother(val_pipe)\n")
    assert "is held in one list with pipeline val_fn, which is not converted" in _reasons(result), result.output
    assert result.output.count("@pipeline_def") == 2
    assert "pipe.build()" in result.output
