"""External-source conversions give the same batches, and end (StopIteration) at the same run.

Runs pipelines of the golden cases in pipeline mode (DALI 2.4, CPU) and their converted generators
(native ndd) side by side, past the end of finite sources, and compares every sample (dtype, shape,
values) and layout; a run that raised StopIteration must raise it on both sides. Covers every
pipeline of a case, where the ``# golden-run:`` / ``# golden-verify:`` header names one.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from dali_migrate.device_cpu import to_cpu

np = pytest.importorskip("numpy")
ndd = pytest.importorskip("nvidia.dali.experimental.dynamic")

GOLDEN = Path(__file__).resolve().parent / "golden"

# (case, pipeline, arguments (DATA: the fixture data root), runs, how many of them raise StopIteration)
CASES = [
    ("external_source_callables", "sample_pipe", lambda d: {}, 4, 0),
    ("external_source_callables", "batch_info_pipe", lambda d: {}, 3, 0),
    ("external_source_callables", "iterable_pipe", lambda d: {}, 6, 2),
    ("external_source_callables", "generator_pipe", lambda d: {}, 7, 2),
    # cycle=True / "quiet": past two rewinds; "raise": ends where the data does; a spent iterator
    # rewound gives nothing, which ends the pipeline
    ("external_source_cycle", "cycle_pipe", lambda d: {}, 8, 0),
    ("external_source_cycle", "quiet_generator_pipe", lambda d: {}, 8, 0),
    ("external_source_cycle", "epoch_pipe", lambda d: {}, 5, 2),
    ("external_source_cycle", "one_pass_pipe", lambda d: {}, 5, 2),
    ("external_source_reader", "reader_and_params", lambda d: {"data_dir": str(d / "images")}, 8, 0),
    ("external_source_reader", "frames_and_angles", lambda d: {}, 5, 2),
    ("external_source_outputs", "external_input_pipe", lambda d: {"data_root": str(d)}, 7, 0),
    ("external_source_outputs", "sample_pairs", lambda d: {}, 4, 0),
    ("legacy_iter_setup", "ExternalSourcePipeline", lambda d: {"batch_size": 4, "data_root": str(d)}, 7, 0),
    ("legacy_iter_setup", "FramePipeline", lambda d: {"batch_size": 4, "n_frames": 10}, 5, 2),
    ("legacy_subclass_of_subclass", "HybridPipe", lambda d: {"batch_size": 4, "data_dir": str(d / "images")}, 7, 0),
    ("legacy_subclass_of_subclass", "FlipPipe", lambda d: {"batch_size": 4, "data_dir": str(d / "images")}, 7, 0),
    ("legacy_subclass_of_subclass", "FullSizePipe", lambda d: {"batch_size": 4, "data_dir": str(d / "images")}, 7, 0),
]


def _load(path: Path, tmp_path: Path, name: str):
    """The file moved onto the CPU, imported (its `if __name__ == "__main__":` block does not run)."""
    cpu = tmp_path / f"{name}.py"
    cpu.write_text(to_cpu(path.read_text(encoding="utf-8")), encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, cpu)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _next(it):
    try:
        return it()
    except StopIteration:
        return "stop"


@pytest.mark.parametrize("case,name,kwargs,runs,stops", CASES, ids=[f"{c}::{n}" for c, n, *_ in CASES])
def test_same_batches_and_same_end(case, name, kwargs, runs, stops, fixture_data, tmp_path):
    original = _load(GOLDEN / f"{case}.py", tmp_path, f"_es_original_{case}")
    converted = _load(GOLDEN / f"{case}.expected.py", tmp_path, f"_es_converted_{case}")
    # The thread count in force: DALI 2.4's dynamic mode can hang when it goes down in one process.
    settings = {**kwargs(fixture_data), "num_threads": ndd.get_num_threads(), "device_id": None}
    pipe = getattr(original, name)(**settings)
    pipe.build()
    gen = getattr(converted, name)(**settings)
    seen_stops = 0
    for i in range(runs):
        want, got = _next(pipe.run), _next(lambda: next(gen))
        if isinstance(want, str) or isinstance(got, str):
            assert want == got, (i, want, got)
            seen_stops += 1
            continue
        assert len(want) == len(got), i
        for x, y in zip(want, got):
            assert (x.layout() or "") == (y.layout or ""), (i, x.layout(), y.layout)
            assert len(x) == y.batch_size, i
            for k in range(len(x)):
                a, b = np.asarray(x.at(k)), np.asarray(y.select(k))
                assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b), (i, k)
    assert seen_stops == stops


def test_source_made_by_the_caller_and_passed_to_a_pipeline_class(tmp_path):
    # legacy_source_passed_in: `eii = ExternalInputIterator(bs)` then `ExternalSourcePipeline(external_iterator=eii, ...)`,
    # read through DALIClassificationIterator(auto_reset=True) for three epochs
    import warnings

    torch = pytest.importorskip("torch")  # noqa: F841 - the iterators yield torch tensors
    original = _load(GOLDEN / "legacy_source_passed_in.py", tmp_path, "source_passed_in_original")
    converted = _load(GOLDEN / "legacy_source_passed_in.expected.py", tmp_path, "source_passed_in_converted")

    def epochs(module):
        it = module.make_loader(2, 6)
        seen = []
        for _ in range(3):
            seen += [(d[0]["data"].numpy().tolist(), d[0]["label"].numpy().tolist()) for d in it]
            seen.append("end of epoch")
        return seen

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = epochs(original)
    got = epochs(converted)
    assert any(isinstance(x, tuple) for x in want)
    assert got == want
