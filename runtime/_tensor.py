"""`Tensor`: one sample, wrapping a DALI backend TensorCPU/TensorGPU.

Operator outputs arrive as a one-sample TensorList; the Tensor keeps that list so it can go
straight back into the next operator without re-wrapping (that is most of the per-call saving
over native ndd, together with running synchronously without Invocation objects).
"""

import numpy as np

from . import _backend as _be
from . import _types
from ._arith import ArithmeticMixin
from ._device import CPU, Device
from ._device import device as _to_device


def _host_array(data):
    """numpy array for Python/numpy/torch/DLPack data, with ndd's scalar typing rules
    (Python float -> float32, int -> int32, bool -> bool; numpy values keep their dtype)."""
    if isinstance(data, np.ndarray):
        return data
    if isinstance(data, np.generic):
        return np.asarray(data)
    if type(data).__module__.startswith("torch"):
        return data.detach().cpu().numpy() if data.device.type != "cpu" else data.numpy()
    if hasattr(data, "__array__") or hasattr(data, "__array_interface__"):
        return np.asarray(data)
    if hasattr(data, "__dlpack__"):
        return np.from_dlpack(data)
    arr = np.asarray(data)
    if arr.dtype == np.float64:
        arr = arr.astype(np.float32)
    elif arr.dtype == np.int64:
        if arr.size == 0 or (arr.min() >= -(2**31) and arr.max() < 2**31):
            arr = arr.astype(np.int32)
    return arr


def _is_gpu_storage(x):
    return _be.TensorGPU is not None and isinstance(x, (_be.TensorGPU, _be.TensorListGPU))


class Tensor(ArithmeticMixin):
    """A single tensor (sample). See native ndd's Tensor; same properties and conversions."""

    def __init__(self, data=None, dtype=None, device=None, layout=None, copy=False, *,
                 _tl=None):
        self._tl = _tl  # one-sample backend TensorList, when we have it
        self._storage = None  # backend TensorCPU/TensorGPU, made on demand from _tl
        self._keep = None  # host array the storage may alias
        if _tl is not None:
            return
        if isinstance(data, Tensor):
            self._tl, self._storage, self._keep = data._tl, data._storage, data._keep
            if copy:
                self._set_host(np.array(data.__array__()), data.layout)
        elif isinstance(data, (_be.TensorCPU,)) or _is_gpu_storage(data):
            if isinstance(data, (_be.TensorListCPU,)) or (
                    _be.TensorListGPU is not None and isinstance(data, _be.TensorListGPU)):
                data = data.as_tensor()
            self._storage = data
            if copy:
                self._set_host(np.array(data), data.layout() or None)
        elif isinstance(data, _be.TensorListCPU):
            self._storage = data.as_tensor()
        elif _be.is_cuda_dlpack(data):
            # CUDA data stays on its device (a copy through the host would change the device)
            self._storage = _be.tensor_gpu_from_dlpack(data, layout)
            self._keep = data
            if copy:  # a copy of our own, independent of the producer's memory
                from ._ops import call_schema

                copied = call_schema("Copy", self)
                self._tl, self._storage, self._keep = copied._tl, copied._storage, copied._keep
        else:
            self._set_host(np.array(_host_array(data)) if copy else _host_array(data), None)
        if dtype is not None and self.dtype != _types.dtype(dtype):
            self._tl = _cast(self, dtype)._tl
            self._storage = None
        if layout is not None and layout != self.layout:
            self._set_host(self.__array__(), layout)
        dev = _to_device(device)
        if dev is not None and dev != self.device:
            other = self.to_device(dev)
            self._tl, self._storage, self._keep = other._tl, other._storage, other._keep

    def _set_host(self, arr, layout):
        arr = np.require(arr, requirements="C")
        self._keep = arr
        self._storage = _be.TensorCPU(arr, layout or "")
        self._tl = None

    # --- backend views -------------------------------------------------------------------
    def _st(self):
        if self._storage is None:
            self._storage = self._tl[0]
        return self._storage

    def _as_tl(self):
        """One-sample TensorList for feeding an operator."""
        if self._tl is None:
            st = self._st()
            if isinstance(st, _be.TensorCPU):
                self._tl = _be.TensorListCPU([st])
            else:
                self._tl = _be.TensorListGPU([st])
        return self._tl

    def _broadcast_tl(self, n):
        """n copies of this sample, as a TensorList (for batch calls with Tensor inputs)."""
        if n == 1:
            return self._as_tl()
        return _be.broadcast(self._st(), n)

    # --- properties ----------------------------------------------------------------------
    @property
    def shape(self):
        if self._storage is None:
            return tuple(self._tl.shape()[0])
        return tuple(self._storage.shape())

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def dtype(self):
        src = self._tl if self._storage is None else self._storage
        return _types.DType.from_type_id(src.dtype)

    @property
    def layout(self):
        src = self._tl if self._storage is None else self._storage
        return src.layout() or None

    @property
    def device(self):
        src = self._tl if self._storage is None else self._storage
        if _is_gpu_storage(src):
            return Device("gpu", src.device_id())
        return CPU

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def itemsize(self):
        return self.dtype.bytes

    @property
    def nbytes(self):
        return self.size * self.itemsize

    def item(self):
        if self.size != 1:
            raise ValueError("Only a tensor with exactly one element can be converted to a scalar")
        return self.__array__().reshape(()).item()

    def evaluate(self):
        return self  # the runtime is synchronous: nothing is pending

    # --- device movement -----------------------------------------------------------------
    def to_device(self, device, force_copy=False):
        dev = _to_device(device)
        if dev == self.device and not force_copy:
            return self
        if dev.device_type == "cpu":
            return Tensor(_tl=_be.to_cpu(self._as_tl()))
        return Tensor(_tl=_be.to_gpu(self._as_tl(), dev.device_id))

    def cpu(self):
        return self.to_device(CPU)

    def gpu(self, index=None):
        return self.to_device(Device("gpu", index))

    # --- interop -------------------------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        if self.device.device_type != "cpu":
            raise TypeError("Cannot convert a GPU tensor to numpy; call .cpu() first")
        arr = np.asarray(self._st())
        if dtype is not None:
            arr = arr.astype(dtype, copy=False)
        return np.array(arr) if copy else arr

    def __dlpack_device__(self):
        d = self.device
        return (1, 0) if d.device_type == "cpu" else (2, d.device_id)

    def __dlpack__(self, stream=None, **kwargs):
        if self.device.device_type == "cpu":
            return self.__array__().__dlpack__()
        return _be.gpu_dlpack(self._st(), stream)

    @property
    def __cuda_array_interface__(self):
        if self.device.device_type != "gpu":
            raise AttributeError("__cuda_array_interface__ is only available on GPU tensors")
        return self._st().__cuda_array_interface__

    def torch(self, copy=None):
        import torch

        if self.device.device_type == "cpu":
            t = torch.from_numpy(np.array(self.__array__(), copy=False))
        else:
            t = torch.from_dlpack(self)
        return t.clone() if copy else t

    def __getitem__(self, index):
        from ._subscript import subscript

        return subscript(self, index)

    def __repr__(self):
        if self.device.device_type == "cpu":
            body = np.array2string(self.__array__(), prefix="    ")
        else:
            body = "..."
        return (f"Tensor(\n    {body},\n    dtype={self.dtype},\n"
                + (f'    layout="{self.layout}",\n' if self.layout else "")
                + f'    device="{self.device}",\n    shape={self.shape})')


def _from_tl(tl, _new=object.__new__):
    """Tensor(_tl=tl) without the constructor's argument handling (the per-call hot path).
    Must set what __init__ sets for `_tl=`."""
    t = _new(Tensor)
    t._tl = tl
    t._storage = None
    t._keep = None
    return t


def _cast(x, dtype):
    from . import _ops

    return _ops.call_schema("Cast", x, dtype=_types.type_id(dtype))


def tensor(data, dtype=None, device=None, layout=None):
    """A Tensor holding a copy of `data`."""
    from ._batch import Batch

    if isinstance(data, Batch):
        return as_tensor(data, dtype=dtype, device=device, layout=layout, _copy=True)
    return Tensor(data, dtype=dtype, device=device, layout=layout, copy=True)


def as_tensor(data, dtype=None, device=None, layout=None, pad=False, _copy=False):
    """A Tensor viewing `data` where possible (no copy). A Batch is stacked (padded if asked)."""
    from ._batch import Batch

    if isinstance(data, Batch):
        data = data._stacked(pad=pad, copy=_copy)
    if isinstance(data, Tensor) and dtype is None and device is None and layout is None:
        return data
    return Tensor(data, dtype=dtype, device=device, layout=layout)
