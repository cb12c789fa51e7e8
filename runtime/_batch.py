"""`Batch`: a list of samples, wrapping a DALI backend TensorListCPU/TensorListGPU.

Like native ndd, a Batch has no `__getitem__` (`batch[i]` raises "'Batch' object is not
subscriptable"): `.select(i)` picks samples, `.slice[...]` indexes inside every sample.
"""

import numpy as np

from . import _backend as _be
from . import _types
from ._arith import ArithmeticMixin
from ._device import CPU, Device
from ._device import device as _to_device
from ._tensor import Tensor, _host_array, _is_gpu_storage


class _TensorList:
    """What `batch.tensors` returns: an indexable, lazily materialised view of the samples."""

    def __init__(self, batch, indices=None):
        self._batch = batch
        self._indices = range(batch.batch_size) if indices is None else indices

    def __len__(self):
        return len(self._indices)

    def __getitem__(self, sel):
        return self.select(sel)

    def __iter__(self):
        return (self._batch._get_tensor(i) for i in self._indices)

    def select(self, sel):
        if isinstance(sel, slice):
            return _TensorList(self._batch, self._indices[sel])
        if isinstance(sel, list):
            return _TensorList(self._batch, [self._indices[i] for i in sel])
        return self._batch._get_tensor(self._indices[sel])

    def tolist(self):
        return list(self)

    def as_batch(self, copy=False):
        return batch(self.tolist()) if copy else as_batch(self.tolist())


class _BatchedSlice:
    def __init__(self, b):
        self._batch = b

    def __getitem__(self, index):
        from ._subscript import subscript

        return subscript(self._batch, index)


def _tl_from_samples(samples, layout):
    """TensorList from a list of tensor-like samples (all on one device)."""
    stor = []
    keep = []
    for s in samples:
        if isinstance(s, Tensor):
            stor.append(s._st())
        elif isinstance(s, _be.TensorCPU) or _is_gpu_storage(s):
            stor.append(s)
        else:
            arr = np.require(_host_array(s), requirements="C")
            keep.append(arr)
            stor.append(_be.TensorCPU(arr, layout or ""))
    if stor and not isinstance(stor[0], _be.TensorCPU):
        tl = _be.TensorListGPU(stor, layout or "")
    else:
        tl = _be.TensorListCPU(stor, layout or "")
    return tl, keep


class Batch(ArithmeticMixin):
    """A batch of samples. See native ndd's Batch; same properties and conversions."""

    def __init__(self, tensors=None, dtype=None, device=None, layout=None, copy=False, *,
                 _tl=None):
        self._tl = _tl
        self._keep = None
        self._tensors = None  # cache of Tensor wrappers, made on demand
        if _tl is not None:
            return
        data = tensors
        if isinstance(data, Batch):
            self._tl, self._keep = data._tl, data._keep
            if copy:
                self._tl = _be.copy_tl(self._tl)
        elif isinstance(data, _be.TensorListCPU) or (
                _be.TensorListGPU is not None and isinstance(data, _be.TensorListGPU)):
            self._tl = _be.copy_tl(data) if copy else data
        elif isinstance(data, (list, tuple, _TensorList)):
            samples = list(data)
            if not samples:
                if dtype is None:
                    raise ValueError("Element type must be specified if the list is empty")
                arr = np.zeros((0,), _types.to_numpy(dtype))
                self._tl = _be.TensorListCPU(arr[None][:0].reshape(0, 0), layout or "")
            else:
                if any(isinstance(s, Batch) for s in samples):
                    raise ValueError("A list of Batch objects is not a valid argument type")
                if copy:
                    samples = [np.array(_host_array(s)) if not isinstance(s, Tensor)
                               else Tensor(s, copy=True) for s in samples]
                self._tl, self._keep = _tl_from_samples(samples, layout)
        elif isinstance(data, Tensor):
            self._tl = _be.split_outer(data._st(), layout)
        else:  # tensor-like: the outermost dimension is the batch dimension
            arr = _host_array(data)
            if arr.ndim == 0:
                raise ValueError("Cannot create a batch from a scalar")
            arr = np.array(arr) if copy else np.require(arr, requirements="C")
            self._keep = arr
            self._tl = _be.TensorListCPU(arr, layout or "")
        if dtype is not None and self.dtype != _types.dtype(dtype):
            from . import _ops

            self._tl = _ops.call_schema("Cast", self, dtype=_types.type_id(dtype))._tl
        if layout is not None and (self._tl.layout() or None) != layout:
            self._tl = _be.with_layout(self._tl, layout)
        dev = _to_device(device)
        if dev is not None and dev != self.device:
            self._tl = self.to_device(dev)._tl

    @staticmethod
    def broadcast(sample, batch_size, device=None, dtype=None):
        if isinstance(sample, Batch):
            raise ValueError("Cannot broadcast a Batch")
        t = sample if isinstance(sample, Tensor) else Tensor(sample, dtype=dtype)
        if dtype is not None and t.dtype != _types.dtype(dtype):
            t = Tensor(t, dtype=dtype)
        b = Batch(_tl=t._broadcast_tl(batch_size))
        return b.to_device(device) if device is not None else b

    # --- properties ----------------------------------------------------------------------
    @property
    def batch_size(self):
        return len(self._tl)

    @property
    def shape(self):
        return [tuple(s) for s in self._tl.shape()]

    @property
    def dtype(self):
        return _types.DType.from_type_id(self._tl.dtype)

    @property
    def layout(self):
        return self._tl.layout() or None

    @property
    def ndim(self):
        return self._tl.ndim()

    @property
    def device(self):
        if _is_gpu_storage(self._tl):
            return Device("gpu", self._tl.device_id())
        return CPU

    @property
    def tensors(self):
        return _TensorList(self)

    @property
    def slice(self):
        return _BatchedSlice(self)

    def _get_tensor(self, i):
        if self._tensors is None:
            self._tensors = [None] * self.batch_size
        t = self._tensors[i]
        if t is None:
            t = self._tensors[i] = Tensor(self._tl[i])
            t._keep = self  # the sample views this batch's memory
        return t

    def __iter__(self):
        return (self._get_tensor(i) for i in range(self.batch_size))

    def __len__(self):
        return self.batch_size

    def select(self, sel):
        if sel is Ellipsis:
            return self
        if isinstance(sel, (slice, list)):
            return Batch(self.tensors.select(sel).tolist())
        return self._get_tensor(sel)

    def evaluate(self):
        return self

    # --- device movement -----------------------------------------------------------------
    def to_device(self, device, force_copy=False):
        dev = _to_device(device)
        if dev == self.device:
            return Batch(_tl=_be.copy_tl(self._tl)) if force_copy else self
        if dev.device_type == "cpu":
            return Batch(_tl=_be.to_cpu(self._tl))
        return Batch(_tl=_be.to_gpu(self._tl, dev.device_id))

    def cpu(self):
        return self.to_device(CPU)

    def gpu(self, index=None):
        return self.to_device(Device("gpu", index))

    # --- conversion ----------------------------------------------------------------------
    def _stacked(self, pad=False, copy=False):
        """The batch as one Tensor with a leading batch dimension."""
        tl = self._tl
        if tl.is_dense_tensor():
            t = Tensor(tl.as_tensor())
            t._keep = self
            return Tensor(t, copy=True) if copy else t
        shapes = self.shape
        if any(s != shapes[0] for s in shapes[1:]):
            if not pad:
                raise ValueError("The batch has a non-uniform shape. "
                                 "To convert it to a tensor, `pad` argument must be ``True``")
            from . import _ops

            return _ops.call_schema("Pad", self)._stacked()
        return Tensor(np.stack([np.asarray(t) for t in self]), layout=_stack_layout(self.layout))

    def torch(self, copy=None, pad=False):
        if copy is False and not self._tl.is_dense_tensor():
            raise ValueError("This batch cannot be converted to a tensor without a copy.")
        return self._stacked(pad=pad).torch(copy)

    def __repr__(self):
        body = ",\n".join("    " + repr(np.asarray(t)) if self.device.device_type == "cpu"
                          else "    ..." for t in self)
        return (f"Batch(\n{body},\n    dtype={self.dtype},\n"
                + (f'    layout="{self.layout}",\n' if self.layout else "")
                + f'    device="{self.device}",\n    batch_size={self.batch_size})')


def _from_tl(tl, _new=object.__new__):
    """Batch(_tl=tl) without the constructor's argument handling (the per-call hot path).
    Must set what __init__ sets for `_tl=`."""
    b = _new(Batch)
    b._tl = tl
    b._keep = None
    b._tensors = None
    return b


def _stack_layout(layout):
    return ("N" + layout) if layout else None


def batch(tensors, dtype=None, device=None, layout=None):
    """A Batch holding a copy of `tensors`."""
    return Batch(tensors, dtype=dtype, device=device, layout=layout, copy=True)


def as_batch(tensors, dtype=None, device=None, layout=None):
    """A Batch viewing `tensors` where possible (no copy)."""
    if isinstance(tensors, Batch) and dtype is None and device is None and layout is None:
        return tensors
    return Batch(tensors, dtype=dtype, device=device, layout=layout)
