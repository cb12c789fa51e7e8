"""A pytest helper for users' own test suites: the converted code must equal the original.

    from dali_migrate.testing import assert_equivalent

    def test_train_pipeline_converted():
        assert_equivalent("data/pipelines.py", name="train_pipe", against="data/pipelines_ndd.py",
                          params={"data_dir": "tests/data/images"}, device="cpu")
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Union

PathLike = Union[str, Path]


def assert_equivalent(
    original: PathLike,
    name: Optional[str] = None,
    *,
    against: Optional[PathLike] = None,
    params: Optional[dict] = None,
    iterations: Optional[int] = None,
    batch_size: Optional[int] = None,
    seed: Optional[int] = None,
    device: str = "cpu",
    rtol: float = 0.0,
    atol: float = 0.0,
):
    """Fail (AssertionError) unless every output of every iteration is equal; return the verdict.

    Errors that stop the check itself (cannot import, cannot build) raise VerifyError.
    """
    from dali_migrate.verify import Options, verify

    verdict = verify(
        Options(
            original=Path(original), name=name, against=Path(against) if against is not None else None,
            iterations=iterations, batch_size=batch_size, seed=seed, device=device,
            params=dict(params or {}), rtol=rtol, atol=atol,
        )
    )
    if not verdict.equal:
        raise AssertionError(verdict.describe())
    return verdict
