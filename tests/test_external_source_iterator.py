"""Framework iterators over a pipeline with an external source: the converted code gives the same
epochs, and calls the source at the same points, as DALI's iterator over the pipeline.

Each case is a small program in pipeline mode: a source (a callable that ends after a few batches,
an iterable that rewinds itself, a list, a generator function, an endless iterable...), a
pipeline over it and a loop over ``DALIGenericIterator`` for three epochs (``for`` loops, ``next()``
with ``reset()``, ``auto_reset``, ``size=`` with each last-batch policy, other prefetch depths).
The source and the loop write to one list of events: each call of the source (with the iteration
and epoch DALI gives a callable), each batch taken (its values), each StopIteration and
``len(loader)``. The program is converted with the codemod, both versions are moved onto the CPU
and run, and the lists must be equal: where DALI's iterator resets the pipeline at a source's end
(``pipe.reset()``: the source starts again), how far ahead it draws, which batches make an epoch.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import random
import runpy
import sys
import types as pytypes
import warnings
from pathlib import Path

import pytest

from dali_migrate.device_cpu import to_cpu
from dali_migrate.engine import convert_source

torch = pytest.importorskip("torch")
pytest.importorskip("nvidia.dali.plugin.pytorch")
ndd = pytest.importorskip("nvidia.dali.experimental.dynamic")

PROGRAM = '''\
import numpy as np
from nvidia.dali import fn, pipeline_def, types
{imports}

EVENTS = []
{source}

@pipeline_def(batch_size=4, num_threads={threads}, device_id=0{settings})
def pipe_fn():
    x = fn.external_source(source={make}{es_args})
    return fn.cast(x, dtype=types.INT32)


def epochs(n):
    EVENTS.clear()
    pipe = pipe_fn()
    pipe.build()
    loader = DALIGenericIterator(pipe, ["x"]{args})
    for _ in range(n):
        {loop}
        EVENTS.append(("len", len(loader)))
    return EVENTS
'''

# Sources: each batch's values tell where it comes from.
CALLABLE = '''
class Counter:
    """Five batches an epoch, from the iteration DALI gives."""

    def __call__(self, info):
        EVENTS.append(("call", info.iteration, info.epoch_idx))
        if info.iteration >= 5:
            raise StopIteration
        return [np.full((2,), 100 * info.epoch_idx + 10 * info.iteration + i, dtype=np.int16) for i in range(4)]
'''
PER_SAMPLE = '''
class Samples:
    """Ten samples an epoch, one call each: the third batch of an epoch is the last, cut short."""

    def __call__(self, info):
        EVENTS.append(("call", info.idx_in_epoch, info.iteration, info.epoch_idx))
        if info.idx_in_epoch >= 10:
            raise StopIteration
        return np.full((3,), 100 * info.epoch_idx + info.idx_in_epoch, dtype=np.int16)
'''
REWINDING = '''
class Rewinding:
    """Three batches, then StopIteration; iter() is called once, the class starts again itself."""

    def __init__(self):
        self.served = 0

    def __iter__(self):
        EVENTS.append("iter")
        self.i = 0
        return self

    def __next__(self):
        EVENTS.append(("next", self.i))
        if self.i == 3:
            self.__iter__()
            raise StopIteration
        self.i += 1
        self.served += 1
        return [np.full((2,), 10 * self.served + k, dtype=np.uint8) for k in range(4)]
'''
ENDLESS = '''
class Endless:
    """Never ends (the index wraps, as DALI's PyTorch external-input example writes it)."""

    def __init__(self):
        self.n = 5

    def __iter__(self):
        EVENTS.append("iter")
        self.i = 0
        return self

    def __next__(self):
        EVENTS.append(("next", self.i))
        if self.i >= self.n:
            raise StopIteration
        batch = [np.full((2,), self.i * 4 + k, dtype=np.uint8) for k in range(4)]
        self.i = (self.i + 1) % self.n
        return batch
'''
LIST = '''
FIRST = [np.full((2,), k, dtype=np.uint8) for k in range(4)]
SECOND = [np.full((2,), 10 + k, dtype=np.uint8) for k in range(4)]
THIRD = [np.full((2,), 20 + k, dtype=np.uint8) for k in range(4)]
'''
GENERATOR = '''
def frames():
    EVENTS.append("generator")
    for b in range(3):
        EVENTS.append(("yield", b))
        yield [np.full((2,), 10 * b + k, dtype=np.uint8) for k in range(4)]
'''

FOR_LOOP = """for data in loader:
            EVENTS.append(("batch", VALUE))"""
NEXT_LOOP = """while True:
            try:
                data = next(loader)
            except StopIteration:
                EVENTS.append("stop")
                break
            EVENTS.append(("batch", VALUE))
        {RESET}"""
# (DROP's reset() takes the batch it drops: where the pipeline is spent, it raises StopIteration)
RESET = """try:
            loader.reset()
        except StopIteration:
            EVENTS.append("stop in reset")"""
NEXT_LOOP = NEXT_LOOP.replace("{RESET}", RESET)
# A fixed number of next() calls: past an epoch's end, and reset() whether or not it ended.
FIXED_LOOP = """for _ in range(4):
            try:
                data = next(loader)
                EVENTS.append(("batch", VALUE))
            except StopIteration:
                EVENTS.append("stop")
        {RESET}""".replace("{RESET}", RESET)

SOURCES = {
    "callable": (CALLABLE, "Counter()", ", batch_info=True"),
    "per-sample": (PER_SAMPLE, "Samples()", ", batch=False"),
    "rewinding": (REWINDING, "Rewinding()", ""),
    "endless": (ENDLESS, "Endless()", ""),
    "list": (LIST, "[FIRST, SECOND, THIRD]", ""),
    "generator": (GENERATOR, "frames", ""),
    "cycle-raise": (LIST, "[FIRST, SECOND, THIRD]", ', cycle="raise"'),
}


def _cases():
    out = []
    for name in SOURCES:
        if name == "endless":
            continue  # without size= an epoch never ends: below
        out.append((f"{name}-for", name, "", "", FOR_LOOP))
        out.append((f"{name}-next-reset", name, "", "", NEXT_LOOP))
        out.append((f"{name}-auto-reset", name, ", auto_reset=True", "", FOR_LOOP))
    for policy in ("FILL", "DROP", "PARTIAL"):
        pol = f"last_batch_policy=LastBatchPolicy.{policy}"
        for size in (12, 10, 30):  # the source's batches, fewer (not a multiple of 4), more
            out.append((f"callable-size{size}-{policy}", "callable", f", size={size}, {pol}", "", NEXT_LOOP))
            out.append((f"rewinding-size{size}-{policy}", "rewinding", f", size={size}, {pol}", "", FIXED_LOOP))
        out.append((f"endless-size-padded-{policy}", "endless", f", size=18, last_batch_padded=True, {pol}", "", FOR_LOOP))
        out.append((f"endless-size-{policy}", "endless", f", size=10, auto_reset=True, {pol}", "", FOR_LOOP))
    out.append(("callable-depth1", "callable", ", size=8", ", prefetch_queue_depth=1", FIXED_LOOP))
    out.append(("callable-depth3", "callable", ", size=8", ", prefetch_queue_depth=3", FIXED_LOOP))
    out.append(("rewinding-not-pipelined", "rewinding", ", size=8", ", exec_pipelined=False", FIXED_LOOP))
    out.append(("list-not-prepared", "list", ", prepare_first_batch=False", "", NEXT_LOOP))
    out.append(("callable-not-prepared-size", "callable", ", size=8, prepare_first_batch=False", "", FIXED_LOOP))
    return out


CASES = _cases()


def _load(tmp_path, name, source):
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"_es_it_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


#: framework -> (its imports, a batch's values from the iterator's `data`, the emitted class)
FRAMEWORKS = {
    "torch": ("from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy",
              'data[0]["x"].tolist()', "DaliTorchSourceIterator"),
    "jax": ("from nvidia.dali.plugin.jax import DALIGenericIterator\nfrom nvidia.dali.plugin.base_iterator import LastBatchPolicy",
            'np.asarray(data["x"]).tolist()', "DaliJaxSourceIterator"),
    "paddle": ("from nvidia.dali.plugin.paddle import DALIGenericIterator, LastBatchPolicy",
               'np.array(data[0]["x"]).tolist()', "DaliPaddleSourceIterator"),
}


def program(source: str, args: str, settings: str, loop: str, framework: str = "torch") -> str:
    text, make, es_args = SOURCES[source]
    imports, value, _ = FRAMEWORKS[framework]
    return PROGRAM.format(source=text, make=make, es_args=es_args, args=args, settings=settings,
                          loop=loop.replace("VALUE", value), threads=ndd.get_num_threads(), imports=imports)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_iterator_over_an_external_source_matches(case, tmp_path):
    _name, source, args, settings, loop = case
    _compare(tmp_path, program(source, args, settings, loop), "DaliTorchSourceIterator")


def _compare(tmp_path, text, cls):
    result = convert_source(text)
    assert not result.markers, result.output
    assert f"{cls}(PrefetchedPipeline(pipe" in result.output
    original = _load(tmp_path, "original", to_cpu(text))
    converted = _load(tmp_path, "converted", to_cpu(result.output))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = list(original.epochs(3))
    got = list(converted.epochs(3))
    assert sum(isinstance(e, tuple) and e[0] == "batch" for e in want) >= 3
    assert got == want


OTHER_FRAMEWORK_CASES = [
    ("callable-size10-DROP", "callable", ", size=10, last_batch_policy=LastBatchPolicy.DROP", "", NEXT_LOOP),
    ("rewinding-for", "rewinding", "", "", FOR_LOOP),
    ("per-sample-auto-reset-depth3", "per-sample", ", auto_reset=True", ", prefetch_queue_depth=3", FOR_LOOP),
]


@pytest.mark.parametrize("case", OTHER_FRAMEWORK_CASES, ids=[c[0] for c in OTHER_FRAMEWORK_CASES])
def test_jax_iterator_over_an_external_source_matches(case, tmp_path):
    pytest.importorskip("jax")
    pytest.importorskip("nvidia.dali.plugin.jax")
    _name, source, args, settings, loop = case
    _compare(tmp_path, program(source, args, settings, loop, "jax"), FRAMEWORKS["jax"][2])


@pytest.mark.parametrize("case", OTHER_FRAMEWORK_CASES, ids=[c[0] for c in OTHER_FRAMEWORK_CASES])
def test_paddle_iterator_over_an_external_source_matches(case, tmp_path, monkeypatch):
    paddle = pytest.importorskip("paddle")
    pytest.importorskip("nvidia.dali.plugin.paddle")
    if not paddle.is_compiled_with_cuda():  # as tests/test_paddle_iterator.py runs DALI's iterator on the CPU
        monkeypatch.setattr(paddle, "CUDAPlace", lambda device_id: None)
        monkeypatch.setattr(paddle.device.cuda, "current_stream", lambda device_id=None: pytypes.SimpleNamespace(cuda_stream=None))
    _name, source, args, settings, loop = case
    _compare(tmp_path, program(source, args, settings, loop, "paddle"), FRAMEWORKS["paddle"][2])


def test_the_prefetch_depth_goes_to_the_pipeline_wrapper():
    out = convert_source(program("callable", "", ", prefetch_queue_depth=3, exec_pipelined=False", FOR_LOOP)).output
    assert "DaliTorchSourceIterator(PrefetchedPipeline(pipe, prefetch_queue_depth=3, exec_pipelined=False), " in out
    # DALI's defaults are not written
    out = convert_source(program("callable", "", ", prefetch_queue_depth=2", FOR_LOOP)).output
    assert "PrefetchedPipeline(pipe)," in out


@pytest.mark.parametrize("settings,words", [
    (', prefetch_queue_depth={"cpu_size": 2, "gpu_size": 3}', "prefetch_queue_depth= is not written as a number"),
    (", exec_pipelined=PIPELINED", "exec_pipelined= is not written as True/False"),
])
def test_prefetch_settings_that_cannot_be_read_are_marked(settings, words):
    result = convert_source("PIPELINED = True\n" + program("callable", "", settings, FOR_LOOP))
    assert "@pipeline_def" in result.output and "DaliTorch" not in result.output
    assert any(words in m.reason for m in result.markers), [m.reason for m in result.markers]


# -- the golden cases written as DALI's examples write them, run as programs ----------------------

GOLDEN = Path(__file__).resolve().parent / "golden"


def _run_program(path: Path, tmp_path: Path, name: str, argv=(), env=None) -> str:
    """The file moved onto the CPU and run as __main__ (the global RNG seeded: the examples
    shuffle with it); what it prints."""
    cpu = tmp_path / f"{name}.py"
    cpu.write_text(to_cpu(path.read_text(encoding="utf-8")), encoding="utf-8")
    out = io.StringIO()
    saved_argv, saved_env = sys.argv, dict(os.environ)
    sys.argv = [str(cpu), *argv]
    os.environ.update(env or {})
    random.seed(0)
    try:
        with contextlib.redirect_stdout(out), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runpy.run_path(str(cpu), run_name="__main__")
    finally:
        sys.argv = saved_argv
        os.environ.clear()
        os.environ.update(saved_env)
    return out.getvalue()


@pytest.mark.parametrize("case,argv,env,lines", [
    # two epochs of the five whole batches of 21 files
    ("external_source_torch_iterator", lambda d: ["--data_dir", str(d)], lambda d: {}, 10),
    # a module's batch_size of 3 (the source's) beside the pipeline's 8: two epochs of 7 batches
    ("external_source_module_batch_size", lambda d: ["--data_dir", str(d)], lambda d: {}, 14),
    # three epochs of size=21 with PARTIAL: 7 batches of 3 each
    ("external_source_torch_external_input", lambda d: [], lambda d: {"DATA_DIR": f"{d}/"}, 21),
])
def test_example_programs_print_the_same(case, argv, env, lines, fixture_data, tmp_path):
    args = (argv(fixture_data), env(fixture_data))
    want = _run_program(GOLDEN / f"{case}.py", tmp_path, f"{case}_original", *args)
    got = _run_program(GOLDEN / f"{case}.expected.py", tmp_path, f"{case}_converted", *args)
    assert len(want.splitlines()) == lines, want
    assert got == want


def test_paddle_example_program_prints_the_same(fixture_data, tmp_path, monkeypatch):
    paddle = pytest.importorskip("paddle")
    pytest.importorskip("nvidia.dali.plugin.paddle")
    if not paddle.is_compiled_with_cuda():  # as tests/test_paddle_iterator.py runs DALI's iterator on the CPU
        monkeypatch.setattr(paddle, "CUDAPlace", lambda device_id: None)
        monkeypatch.setattr(paddle.device.cuda, "current_stream", lambda device_id=None: pytypes.SimpleNamespace(cuda_stream=None))
    case = "external_source_paddle_iter_setup"
    env = {"DATA_DIR": f"{fixture_data}/"}
    want = _run_program(GOLDEN / f"{case}.py", tmp_path, f"{case}_original", env=env)
    got = _run_program(GOLDEN / f"{case}.expected.py", tmp_path, f"{case}_converted", env=env)
    # size=21, batch 4, PARTIAL: 6 batches an epoch, the last one cut to 1
    assert want.count("real batch size: 1") == 3 and len(want.splitlines()) == 18, want
    assert got == want


def test_loader_returned_by_a_function_gives_the_same_epochs(tmp_path):
    case = "external_source_local_iterator_loader"
    original = _load(tmp_path, "loader_original", to_cpu((GOLDEN / f"{case}.py").read_text(encoding="utf-8")))
    converted = _load(tmp_path, "loader_converted", to_cpu((GOLDEN / f"{case}.expected.py").read_text(encoding="utf-8")))
    args = pytypes.SimpleNamespace(batch_size=2, image_shape=(3, 2), fp16=False, num_threads=ndd.get_num_threads(), benchmark_steps=3)

    def epochs(module):
        loader = module.dali_synthetic_dataloader(args, None)
        seen = []
        for _ in range(3):  # each epoch ends where the iterator class raises StopIteration
            seen.append([data[0]["data"].tolist() for data in loader])
        return seen

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = epochs(original)
    got = epochs(converted)
    assert [len(e) for e in want] == [3, 3, 3]
    assert got == want


# Batches PrefetchedPipeline drew ahead, still being computed by native ndd's worker thread when
# the program ends: DALI 2.4 aborts the process there unless they are finished first.
LEFT_IN_FLIGHT = '''\
import numpy as np
import nvidia.dali.experimental.dynamic as ndd


def batches():
    ctx = ndd.EvalContext(num_threads=2, device_id=None)
    images = [np.random.default_rng(i).integers(0, 255, (600, 800, 3), dtype=np.uint8) for i in range(8)]
    while True:
        with ctx:
            x = ndd.resize(ndd.as_batch(images, layout="HWC"), resize_x=1200, resize_y=900)
            y = ndd.gaussian_blur(x, window_size=15)
        yield (y,)


{cls}

pipe = PrefetchedPipeline(batches(), prefetch_queue_depth=3)
print(pipe.share_outputs()[0].batch_size)
'''


def test_batches_drawn_ahead_do_not_abort_the_program_at_exit(tmp_path):
    import subprocess

    from dali_migrate.rules.torch_iterator import PREFETCHED, class_source

    script = tmp_path / "left_in_flight.py"
    script.write_text(LEFT_IN_FLIGHT.format(cls=class_source(PREFETCHED, cls=PREFETCHED)))
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    for _ in range(2):  # (without the finisher DALI 2.4 aborts every time here)
        proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert proc.stdout.strip() == "8"
