"""GPU conformance: for every deterministic operator with a GPU (or mixed) implementation, the
runtime gives the same outputs as native ndd for the same call on the GPU.

Reuses the CPU suite's inputs (test_rt_conformance: GENERIC / OVERRIDES / SKIP); GPU-only
operators get their inputs here (GPU_GENERIC / GPU_OVERRIDES / GPU_SKIP). Inputs are passed as
CPU tensors with device="gpu" to both sides (each moves them the same way), plus a few calls
with inputs already on the GPU. The coverage test fails when the installed DALI has a
deterministic GPU operator in none of the tables.

Skipped without a CUDA device (the runtime's own device count) or where native ndd cannot run.
"""

import glob
import os

import numpy as np
import pytest

pytest.importorskip("nvidia.dali")

import nvidia.dali.types as types  # noqa: E402

from dali_migrate.runtime import _backend, _generate, _ops  # noqa: E402

HAS_GPU = _backend.cuda_device_count() > 0

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="no CUDA device")]

import dali_migrate.runtime as ours  # noqa: E402
import test_rt_conformance as conf  # noqa: E402
from conftest import native_ndd_problem  # noqa: E402


def _lz4_literal_block(data):
    """An LZ4 block holding `data` as literals only (a valid block: the last sequence of a block
    is literals-only)."""
    n = len(data)
    out = bytearray()
    if n < 15:
        out.append(n << 4)
    else:
        out.append(0xF0)
        rest = n - 15
        while rest >= 255:
            out.append(255)
            rest -= 255
        out.append(rest)
    out += data
    return np.frombuffer(bytes(out), np.uint8)


_H, _W = conf.IMG.shape[:2]
_MAPX = np.tile(np.arange(_W, dtype=np.float32)[::-1], (_H, 1))  # mirror in x
_MAPY = np.tile(np.arange(_H, dtype=np.float32)[:, None], (1, _W))

# GPU-only operators the generic call checks as is.
GPU_GENERIC = {"experimental__Dilate", "experimental__Erode", "experimental__MedianBlur"}

# GPU-only operators: schema -> (inputs, kwargs).
GPU_OVERRIDES = {
    "decoders__Inflate": ([(_lz4_literal_block(conf.VEC.tobytes()), None)],
                          {"shape": [conf.VEC.size], "dtype": types.FLOAT}),
    "experimental__Remap": ([(conf.IMG, "HWC"), (_MAPX, "HW"), (_MAPY, "HW")], {}),
    "experimental__Resize": ([(conf.IMG, "HWC")], {"resize_x": 8, "resize_y": 10}),
}

# GPU schema -> why it is not compared.
GPU_SKIP = {
    **conf.SKIP,
    "OpticalFlow": "needs the optical-flow hardware engine and a frame sequence fixture",
    # CPU-only-input operators of the CPU table that DALI also registers for the GPU may be
    # added here with a reason if they turn out not to run from these inputs.
}


def _gpu_ops():
    out = []
    for name in _backend.all_schema_names():
        if not _generate.exposed(name):
            continue
        s = _backend.get_schema(name)
        if _backend.alias_for(s) or _generate.is_reader(s):
            continue
        d = _ops.opdef(name)
        if not ({"gpu", "mixed"} & d.backends):
            continue
        if d.random_state or d.random_seed or d.stateful:
            continue  # random ops: compared in pipeline-compat mode (test_rt_gpu_compat)
        out.append(name)
    return sorted(out)


GPU_OPS = _gpu_ops()


def _inputs(schema, name):
    if name in GPU_OVERRIDES:
        return GPU_OVERRIDES[name]
    return conf._inputs(schema, name)


def _np(x):
    """numpy copy of a runtime / native Tensor or Batch sample, wherever it lives."""
    if hasattr(x, "evaluate"):
        x = x.evaluate()
    dev = getattr(x, "device", None)
    if dev is not None and getattr(dev, "device_type", str(dev)).startswith("gpu"):
        x = x.cpu()
    return np.asarray(x)


def _values(res):
    res = res if isinstance(res, tuple) else (res,)
    return [_np(r) for r in res]


def _pipeline_values_gpu(schema, ins, kwargs):
    """One-op GPU pipeline (for calls native ndd cannot make, as in the CPU suite)."""
    from nvidia.dali import fn
    from nvidia.dali.fn import _to_snake_case
    from nvidia.dali.pipeline import Pipeline

    op = fn
    for p in schema.ModulePath():
        op = getattr(op, p)
    op = getattr(op, _to_snake_case(schema.OperatorName()))
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=0)
    with pipe:
        srcs = [fn.external_source(name=f"i{k}", layout=lay, device="gpu")
                for k, (_, lay) in enumerate(ins)]
        out = op(*srcs, device="gpu", **kwargs)
        pipe.set_outputs(*(out if isinstance(out, (list, tuple)) else [out]))
    pipe.build()
    for k, (a, _) in enumerate(ins):
        pipe.feed_input(f"i{k}", [a])
    return [np.asarray(o.as_cpu()[0]) for o in pipe.run()]


def _native():
    problem = native_ndd_problem()
    if problem:
        pytest.skip(problem)
    return conf.native


def _assert_same(got, expected, what):
    assert len(got) == len(expected), what
    for k, (g, e) in enumerate(zip(got, expected)):
        assert g.dtype == e.dtype and g.shape == e.shape, f"{what} output {k}"
        np.testing.assert_array_equal(g, e, err_msg=f"{what} output {k}")


@pytest.mark.parametrize("name", GPU_OPS)
def test_same_output_as_native_on_gpu(name):
    if name in GPU_SKIP:
        pytest.skip(GPU_SKIP[name])
    native = _native()
    schema = _backend.get_schema(name)
    fn_n, fn_o = conf._resolve(native, schema), conf._resolve(ours, schema)
    if fn_n is None:
        pytest.skip("native ndd does not expose it")
    assert fn_o is not None, f"runtime lacks {name}"
    ins, kwargs = _inputs(schema, name)
    if name in conf.COMPARE_WITH_PIPELINE:
        expected = _pipeline_values_gpu(schema, ins, kwargs)
    else:
        expected = _values(fn_n(*[native.tensor(a, layout=lay) for a, lay in ins],
                                device="gpu", **kwargs))
    got = _values(fn_o(*[ours.tensor(a, layout=lay) for a, lay in ins], device="gpu",
                       **kwargs))
    _assert_same(got, expected, name)


@pytest.mark.parametrize("fn_name,kwargs", [
    ("flip", {"horizontal": 1}),
    ("resize", {"resize_x": 8, "resize_y": 8}),
    ("crop_mirror_normalize", {"crop": [6, 6], "dtype": types.FLOAT, "mirror": 1}),
    ("gaussian_blur", {"sigma": 1.5}),
])
def test_gpu_inputs_and_batches_match_native(fn_name, kwargs):
    """Inputs already on the GPU (Tensor and ragged Batch), outputs stay on the GPU."""
    native = _native()
    imgs = [conf.IMG, conf.IMG[:10, :12].copy(), conf.IMG[3:, 5:].copy()]
    bo = getattr(ours, fn_name)(ours.batch(imgs, layout="HWC").gpu(), **kwargs)
    bn = getattr(native, fn_name)(native.batch(imgs, layout="HWC").gpu(), **kwargs)
    assert bo.device.device_type == "gpu"
    for a, b in zip(bo.cpu(), bn.cpu()):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    to = getattr(ours, fn_name)(ours.tensor(conf.IMG, layout="HWC").gpu(), **kwargs)
    tn = getattr(native, fn_name)(native.tensor(conf.IMG, layout="HWC").gpu(), **kwargs)
    assert to.device.device_type == "gpu"
    np.testing.assert_array_equal(_np(to), _np(tn))


def _fixture_jpegs(root):
    files = sorted(glob.glob(os.path.join(str(root), "images", "**", "*.jp*g"), recursive=True))
    assert files, f"no JPEGs under {root}/images"
    return [np.fromfile(f, dtype=np.uint8) for f in files]


def test_gpu_decode_equals_native(fixture_data):
    native = _native()
    jpegs = _fixture_jpegs(fixture_data)
    got = ours.decoders.image(ours.batch(jpegs), device="gpu")
    exp = native.decoders.image(native.batch(jpegs), device="gpu")
    assert got.device.device_type == "gpu" and got.batch_size == len(jpegs)
    for a, b in zip(got.cpu(), exp.cpu()):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    # one sample (Tensor in, Tensor out)
    t = ours.decoders.image(ours.tensor(jpegs[0]), device="gpu")
    np.testing.assert_array_equal(_np(t), _np(native.decoders.image(native.tensor(jpegs[0]),
                                                                    device="gpu")))


def test_gpu_decode_equals_cpu_pipeline_shape(fixture_data):
    """GPU decode has the same shapes as CPU decode (values may differ by decoder)."""
    jpegs = _fixture_jpegs(fixture_data)
    g = ours.decoders.image(ours.batch(jpegs), device="gpu")
    c = ours.decoders.image(ours.batch(jpegs), device="cpu")
    assert g.shape == c.shape


def test_coverage_every_gpu_operator_is_checked():
    known = (set(conf.GENERIC) | set(conf.OVERRIDES) | set(GPU_GENERIC) | set(GPU_OVERRIDES)
             | set(GPU_SKIP))
    unknown = [n for n in GPU_OPS if n not in known]
    assert not unknown, (f"GPU operators neither compared nor skipped with a reason: {unknown}; "
                         "add them to GPU_GENERIC, GPU_OVERRIDES or GPU_SKIP in this file")
