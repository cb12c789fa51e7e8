"""Fixtures for the runtime tests: a small image folder (3 classes x 7 JPEGs, odd sizes)."""

import pytest

pytest.importorskip("nvidia.dali")


@pytest.fixture(scope="session")
def image_dir(tmp_path_factory):
    np = pytest.importorskip("numpy")
    Image = pytest.importorskip("PIL.Image")
    root = tmp_path_factory.mktemp("imgs")
    rng = np.random.default_rng(0)
    for c in range(3):
        (root / f"c{c}").mkdir()
        for i in range(7):
            arr = rng.integers(0, 255, (40 + 3 * i, 48 + 5 * c, 3), dtype=np.uint8)
            Image.fromarray(arr).save(root / f"c{c}" / f"{i}.jpg", quality=90)
    return str(root)


def has_cuda():
    try:
        import nvidia.dali.backend_impl as b

        return b.GetCUDADeviceCount() > 0
    except Exception:
        return False


_native_problem = []


def native_ndd_problem():
    """None where native ndd runs a CPU operator here, else why it cannot. DALI 1.53's native
    ndd fails on any operator call on a machine without a CUDA driver (its default-device
    lookup), while the runtime does not depend on it."""
    if not _native_problem:
        try:
            import numpy as np
            import nvidia.dali.experimental.dynamic as native

            native.flip(native.tensor(np.zeros((2, 2, 1), np.uint8), layout="HWC"),
                        device="cpu").evaluate()
            _native_problem.append(None)
        except Exception as e:  # noqa: BLE001
            msg = " ".join(str(e).split())[:160]
            _native_problem.append(f"native ndd unusable here ({type(e).__name__}: {msg})")
    return _native_problem[0]


def requires_native_ndd(f):
    """Skip a test that compares against native ndd where native ndd cannot run."""
    problem = native_ndd_problem()
    return pytest.mark.skipif(problem is not None, reason=problem or "")(f)


@pytest.fixture(autouse=True)
def _run_in_tmp_dir(tmp_path, monkeypatch):
    """Operators such as dump_image write files into the working directory: keep them out of the repo."""
    monkeypatch.chdir(tmp_path)
