"""`imread`: read and decode images from file paths (native ndd 2.4's `ndd.imread`).

`io.file.read` followed by `decoders.image`, as native does. A path (str or pathlib.Path) or a
Tensor of encoded path bytes gives a Tensor; a list/tuple of them or a Batch gives a Batch.
Keyword arguments go to `decoders.image` (`output_type=`, ...); `None` values are dropped.
"""

import numpy as np

from ._batch import Batch, batch
from ._tensor import Tensor, tensor


def _path_tensor(p):
    return tensor(np.frombuffer(str(p).encode("utf-8"), dtype=np.uint8).copy())


def imread(filepaths, /, *, device="cpu", **kwargs):
    """Read and decode image(s): Tensor for one path, Batch for a list of paths or a Batch.
    device: "cpu" or "gpu" (where decoding runs)."""
    import dali_migrate.runtime as _rt

    if device not in ("cpu", "gpu"):
        raise ValueError(f"Invalid device: {device}. Must be 'cpu', or 'gpu'.")
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    if isinstance(filepaths, (Tensor, Batch)):
        read_input = filepaths
    elif isinstance(filepaths, (list, tuple)):
        read_input = batch([fp if isinstance(fp, Tensor) else _path_tensor(fp)
                            for fp in filepaths])
    else:
        try:
            read_input = _path_tensor(filepaths)
        except Exception:
            raise TypeError(f"filepaths must be str, pathlib.Path, list, Tensor, or Batch, "
                            f"got {type(filepaths)}") from None
    data = _rt.io.file.read(read_input)
    return _rt.decoders.image(data, device=device, **kwargs)


__all__ = ["imread"]
