"""The forms rules/constant.py, rules/shapes.py and rules/python_function.py write give the same
results on the runtime as on native ndd: Python lists and typed tensors in arithmetic (on the GPU
too, where a list joins the other operand's device), constant batches made with
``Batch.broadcast``, ``as_batch(x.shape, dtype=...)`` and ``as_batch`` over NumPy results."""

import numpy as np
import pytest

pytest.importorskip("nvidia.dali")

import dali_migrate.runtime as ours  # noqa: E402
from conftest import has_cuda, requires_native_ndd  # noqa: E402

IMAGES = [np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3), np.full((4, 1, 3), 200, np.uint8)]
LABELS = [np.array([1], np.int32), np.array([2], np.int32)]


def _native():
    import nvidia.dali.experimental.dynamic as native

    return native


def _samples(batch):
    batch = batch.cpu() if batch.device.device_type == "gpu" else batch
    return [np.asarray(s) for s in batch], batch.layout or ""


def _same(a, b):
    sa, la = _samples(a)
    sb, lb = _samples(b)
    assert la == lb
    assert [(s.dtype, s.shape) for s in sa] == [(s.dtype, s.shape) for s in sb]
    assert all(np.array_equal(x, y) for x, y in zip(sa, sb))


def _arithmetic(nd, device="cpu"):
    images = nd.as_batch(IMAGES, layout="HWC", device=device)
    labels = nd.as_batch(LABELS, device=device)
    return [
        images * [1.25, 0.75, 0.5],
        [1, 2, 3] * images,
        images == [True, False, True],
        images * 2.0,
        3 + labels,
        (-2.5) ** labels,
    ]


@requires_native_ndd
def test_literals_and_lists_in_arithmetic():
    for mine, theirs in zip(_arithmetic(ours), _arithmetic(_native())):
        _same(mine, theirs)


@requires_native_ndd
def test_typed_tensors_in_arithmetic():
    def run(nd):
        images = nd.as_batch(IMAGES, layout="HWC")
        labels = nd.as_batch(LABELS)
        return [labels * nd.tensor(3, dtype=nd.int64), images - nd.tensor(10, dtype=nd.uint8),
                nd.tensor(0.5, dtype=nd.float64) * images, images * nd.tensor([1.0, 2.0, 3.0], dtype=nd.float32)]

    for mine, theirs in zip(run(ours), run(_native())):
        _same(mine, theirs)


@requires_native_ndd
def test_constant_batches():
    def run(nd):
        return [
            nd.Batch.broadcast(nd.tensor([[1, 2], [3, 4]], dtype=nd.uint8, layout="HW"), 3),
            nd.Batch.broadcast(nd.full(nd.tensor(1.0, dtype=nd.float32), shape=[8, 8, 3], layout="HWC"), 3),
            nd.Batch.broadcast(nd.tensor(7, dtype=nd.int32), 3),
            nd.Batch.broadcast(nd.tensor([0.5, 1.5], dtype=nd.float16), 3),
            nd.Batch.broadcast(nd.tensor([1099511627776, -5], dtype=nd.int64), 3),
            -nd.Batch.broadcast(nd.tensor([1.0, 2.0], dtype=nd.float32), 3),
        ]

    for mine, theirs in zip(run(ours), run(_native())):
        _same(mine, theirs)


@requires_native_ndd
def test_shapes():
    def run(nd):
        images = nd.as_batch(IMAGES, layout="HWC")
        scalars = nd.as_batch([np.float32(1), np.float32(2)])
        return [nd.as_batch(images.shape, dtype=nd.int64), nd.as_batch(scalars.shape, dtype=nd.int64),
                nd.as_batch(images.shape, dtype=nd.float32)]

    for mine, theirs in zip(run(ours), run(_native())):
        _same(mine, theirs)


def _flip(image):
    return np.ascontiguousarray(image[:, ::-1]).transpose(2, 0, 1)  # a strided view


@requires_native_ndd
def test_python_function_forms():
    def run(nd):
        images = nd.as_batch(IMAGES, layout="HWC")
        labels = nd.as_batch(LABELS)
        per_sample = nd.as_batch([np.asarray(_flip(np.asarray(s)), order="C") for s in images], layout="CHW")
        per_batch = nd.as_batch([np.asarray(o, order="C") for o in [i // 2 + lab.astype(np.uint8) for i, lab in zip(
            [np.asarray(s) for s in images], [np.asarray(s) for s in labels])]])
        a, b = [nd.as_batch([np.asarray(o, order="C") for o in out], layout=lay)
                for out, lay in zip(zip(*[(x[..., 0], x[..., 1:] / 2) for x in (np.asarray(s) for s in images)]), ["HW", "HWC"])]
        return [per_sample, per_batch, a, b]

    for mine, theirs in zip(run(ours), run(_native())):
        _same(mine, theirs)


@pytest.mark.gpu
@pytest.mark.skipif(not has_cuda(), reason="no CUDA device")
@requires_native_ndd
def test_lists_join_gpu_operands():
    mine, theirs = _arithmetic(ours, "gpu"), _arithmetic(_native(), "gpu")
    for m, t in zip(mine, theirs):
        assert m.device.device_type == t.device.device_type == "gpu"
        _same(m, t)
    on_gpu = [nd.Batch.broadcast(nd.tensor([1, 2], dtype=nd.int32), 2, device="gpu") for nd in (ours, _native())]
    _same(*on_gpu)


GPU_PIPELINE = '''
import numpy as np
from nvidia.dali import fn, pipeline_def, types


@pipeline_def(batch_size=4, num_threads=2, device_id=0)
def gpu_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, resize_x=8, resize_y=8)
    weighted = images * types.Constant(np.float32([1.25, 0.75, 0.5]))
    left = types.Constant([1, 2, 3]) * images
    halves = images * types.Constant(0.5)
    zero = fn.constant(idata=0, shape=[], device="gpu") + images
    with_ones = fn.cat(images, fn.constant(idata=1, shape=[8, 8, 1], dtype=types.UINT8, device="gpu"), axis=2)
    sizes = fn.shapes(images)
    return weighted, left, halves, zero, with_ones, sizes, labels.gpu()
'''


def _load(text, name, folder):
    import importlib.util

    path = folder / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.gpu
@pytest.mark.skipif(not has_cuda(), reason="no CUDA device")
@requires_native_ndd
def test_gpu_pipeline_with_constants_and_shapes(image_dir, tmp_path):
    # Where the values land matters on the GPU: lists and literals join the GPU operand, a GPU
    # constant batch feeds a GPU operator, fn.shapes of a GPU input is on the GPU (as in the pipeline).
    from dali_migrate.engine import convert_source

    converted = convert_source(GPU_PIPELINE).output
    assert "# dali-migrate" not in converted
    pipe = _load(GPU_PIPELINE, "gpu_original", tmp_path).gpu_pipe(image_dir)
    pipe.build()
    native = _load(converted, "gpu_native", tmp_path).gpu_pipe(image_dir)
    mine = _load(converted.replace("import nvidia.dali.experimental.dynamic as ndd", "import dali_migrate.runtime as ndd"),
                 "gpu_runtime", tmp_path).gpu_pipe(image_dir)
    for _ in range(7):
        want = pipe.run()
        for got in (next(native), next(mine)):
            for tl, batch in zip(want, got):
                assert batch.device.device_type == ("gpu" if "GPU" in type(tl).__name__ else "cpu")
                host = tl.as_cpu() if "GPU" in type(tl).__name__ else tl
                samples, layout = _samples(batch)
                assert layout == (host.layout() or "")
                for i, have in enumerate(samples):
                    w = np.asarray(host.at(i))
                    assert have.dtype == w.dtype and have.shape == w.shape and np.array_equal(have, w)
