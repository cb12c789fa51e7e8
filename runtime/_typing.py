"""Type aliases of native ndd's annotations (`DeviceLike`, `DTypeLike`), for code that names
them. Annotation-only: torch types are left out so the runtime never imports torch here."""

from typing import Union

import numpy as np
from nvidia.dali.types import DALIDataType

from ._device import Device
from ._types import DType

DeviceLike = Union[Device, str]  # native also accepts torch.device
DTypeLike = Union[DType, DALIDataType, str, np.dtype]  # native also accepts torch.dtype

__all__ = ["DeviceLike", "DTypeLike"]
