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
