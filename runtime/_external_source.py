"""`ExternalSource`: data from a Python callable or iterable (native ndd 2.4's class), eager.

Calling the object pulls the next item and returns a Tensor (a Batch if the source gave a Batch
or a TensorList, or `batch_size=` was given), or a tuple of them with `num_outputs` > 1. Native
ndd also lets it feed a capture-mode loop (`captured()`); the runtime has no capture mode, so
`captured(batch_size)` is an ordinary eager loop over the source (same items, no prefetch).
"""

from collections.abc import Sequence

from . import _backend as _be
from ._batch import Batch, as_batch
from ._device import device as _as_device
from ._tensor import Tensor, as_tensor


def _batch_size_of(x):
    if isinstance(x, Batch):
        return x.batch_size
    if isinstance(x, (_be.TensorListCPU,)) or (_be.TensorListGPU is not None
                                                and isinstance(x, _be.TensorListGPU)):
        return len(x)
    return None


class ExternalSource:
    """Consume data from a Python callable or iterable `source` (stateful: each call pulls).

    num_outputs: items per pull (tuples when > 1). cycle: "no"/False/None (StopIteration at
    the end), "quiet"/True (repeat), "raise" (StopIteration once, then restart); iterables only.
    device: device of the outputs. layout, dtype: one value or one per output.
    """

    def __init__(self, source, num_outputs=1, *, cycle=None, device="cpu", layout=None,
                 dtype=None):
        callback, has_inputs = _be.external_source_callback(source, cycle)
        if has_inputs:
            raise ValueError("ndd.ExternalSource only supports callables with no parameters")
        self._callback = callback
        if num_outputs <= 0:
            raise ValueError("num_outputs must be strictly positive")
        self._num_outputs = num_outputs
        self._device = device
        self._layouts = self._broadcast_arg(layout)
        self._dtypes = self._broadcast_arg(dtype)

    def __call__(self, *, batch_size=None):
        """Pull one item: Tensor / Batch (tuple if num_outputs > 1). A Tensor is broadcast to
        `batch_size`; a batch must have that size. Raises StopIteration at the end (see cycle)."""
        data = self._callback()
        outs = self._convert_outputs(data, batch_size)
        return outs[0] if self._num_outputs == 1 else outs

    def captured(self, batch_size, ctx=None):
        """Native: iterate one epoch as the root of a capture-mode loop. Here: an eager loop
        yielding `self(batch_size=batch_size)` until the source ends."""
        from ._eval import EvalContext

        def gen():
            with ctx or EvalContext.current():
                while True:
                    try:
                        item = self(batch_size=batch_size)
                    except StopIteration:
                        return
                    yield item

        return gen()

    def _convert_outputs(self, data, batch_size):
        if self._num_outputs == 1:
            outputs = (data,)
        else:
            if not isinstance(data, Sequence) or len(data) != self._num_outputs:
                raise ValueError(f"Expected {self._num_outputs} outputs from the source")
            outputs = data
        device = _as_device(self._device)
        results = tuple(self._convert_output(o, device, batch_size, i)
                        for i, o in enumerate(outputs))
        kind = Batch if isinstance(results[0], Batch) else Tensor
        if not all(isinstance(r, kind) for r in results):
            raise TypeError("Outputs must be uniformly Tensors or uniformly Batches")
        return results

    def _convert_output(self, data, device, batch_size, idx):
        layout, dtype = self._layouts[idx], self._dtypes[idx]
        actual = _batch_size_of(data)
        if actual is not None:
            b = as_batch(data, dtype=dtype, device=device, layout=layout)
            if batch_size is not None and actual != batch_size:
                raise ValueError(f"Expected batch size {batch_size}, got {actual}")
            return b
        t = as_tensor(data, dtype=dtype, device=device, layout=layout)
        if batch_size is not None:
            return Batch.broadcast(t, batch_size=batch_size)
        return t

    def _broadcast_arg(self, value):
        if not isinstance(value, Sequence) or isinstance(value, (str, bytes)):
            return (value,) * self._num_outputs
        if len(value) != self._num_outputs:
            raise ValueError(f"Expected a sequence of size {self._num_outputs}, got {len(value)}")
        return value


__all__ = ["ExternalSource"]
