"""CUDA streams: `Stream`, `stream()`, current/default streams, as native ndd's `_stream.py`.

Resolution order for the stream of an `EvalContext` (native's):
1. the context's own `cuda_stream=` (wrapped with `stream()` at construction);
2. the thread's current stream for the device (`set_current_stream`; a new context copies it
   at construction, the thread's default context follows it);
3. the process-wide default stream for the device (`set_default_stream`);
4. a per-device stream the runtime creates lazily (`_backend.default_stream(device_id)`), so
   work on a device stays ordered, as on native ndd's per-context default stream.

On a machine without a CUDA device every context's `cuda_stream` is None (as native on CPU) and
nothing here touches CUDA unless the caller asks for a stream explicitly.

Stream safety of DLPack (documented in README.md): `Tensor.__dlpack__(stream=s)` hands the
consumer's stream to DALI, which makes `s` wait for the producing stream (no host sync);
`stream=None` waits on the host; `stream=-1` skips synchronization (caller's responsibility).
GPU data made from a foreign DLPack object on the current context's device is imported on that
context's stream.
"""

import threading

from . import _backend as _be

_b = _be._b


def _raw_cuda_stream(obj):
    """The raw handle of a stream-like object. The CUDA stream protocol (`__cuda_stream__`) and
    plain handles are read here; DALI's own helper covers the rest (older DALI releases know
    neither the protocol nor how to refuse what is not a stream, hence the checks)."""
    proto = getattr(obj, "__cuda_stream__", None)
    if proto is not None:
        return int(proto()[1])
    if isinstance(obj, int) and not isinstance(obj, bool):
        return obj
    from nvidia.dali.types import _raw_cuda_stream as raw

    handle = raw(obj)
    if isinstance(handle, int) and not isinstance(handle, bool):
        return handle
    value = getattr(handle, "value", None)  # ctypes.c_void_p
    if isinstance(value, int):
        return value
    raise TypeError(f"Cannot interpret {obj!r} as a CUDA stream")


def _get_stream_device(s):
    if s is None:
        return None
    dev_id = getattr(s, "device_id", None)
    if dev_id is not None:
        return dev_id
    dev = getattr(s, "device", None)
    if dev is not None:
        if isinstance(dev, int):
            return dev
        for attr in ("index", "id"):
            idx = getattr(dev, attr, None)
            if idx is not None:
                return idx
    get = getattr(_b, "GetCUDAStreamDevice", None)  # not in DALI 1.x
    if get is None:
        raise TypeError(f"Cannot tell the device of the stream {s!r}: pass device_id=")
    return get(s)


class Stream:
    """A CUDA stream: created by DALI (`Stream()`, `stream()`) or wrapping a compatible object
    (`__cuda_stream__`, a PyTorch stream, a raw handle). Use `stream()` rather than the class."""

    create_new = object()

    def __init__(self, *, stream=create_new, device_id=None):
        if stream is None:
            raise ValueError(
                "The stream must not be None. To create a new stream, omit the stream parameter.")
        if stream is Stream.create_new:
            if device_id is None:
                device_id = _b.GetCUDACurrentDevice()
            with _be.device_guard(device_id):
                self._obj = _b.Stream(device_id)
            self._device_id = device_id
            self._handle = self._obj.handle
        elif isinstance(stream, Stream):
            if device_id is not None and device_id != stream._device_id:
                raise ValueError(f"The device_id {device_id} doesn't match the id "
                                 f"{stream._device_id} associated with the stream object.")
            self._handle, self._device_id, self._obj = (stream._handle, stream._device_id,
                                                        stream._obj)
        else:
            self._handle = _raw_cuda_stream(stream)
            dev = _get_stream_device(stream)
            if device_id is not None and device_id != dev:
                raise ValueError(f"The device_id {device_id} doesn't match the id {dev} "
                                 f"inferred from the stream handle {self._handle}.")
            self._device_id = dev if device_id is None else device_id
            self._obj = stream
        # What the backend's _Workspace gets: DALI's own stream object where there is one,
        # else this wrapper (it exposes __cuda_stream__, as native ndd passes it).
        self._backend_obj = self._obj if isinstance(self._obj, _b.Stream) else self

    @property
    def handle(self):
        """The raw CUDA stream handle (int)."""
        return self._handle

    @property
    def device_id(self):
        """The CUDA device ordinal of the stream."""
        return self._device_id

    def __cuda_stream__(self):
        return (0, self._handle)

    def __str__(self):
        return f"CUDA stream {self._handle}, device_id={self._device_id}"

    def __repr__(self):
        if isinstance(self._obj, _b.Stream):
            return repr(self._obj)
        return f"Stream(stream={self._obj!r}, device_id={self._device_id})"

    def __eq__(self, value):
        """Same handle and device (the wrapped object does not matter)."""
        if value is None:
            return False
        if value is self:
            return True
        try:
            s = stream(stream=value)
        except TypeError:
            return NotImplemented
        return self._handle == s._handle and self._device_id == s._device_id

    def __ne__(self, value):
        eq = self.__eq__(value)
        return eq if eq is NotImplemented else not eq

    __hash__ = None  # mutable-free but equality is by value across wrapper types, as native

    def synchronize(self):
        """Wait until all work scheduled on this stream is complete."""
        _b.CUDAStreamSynchronize(self._backend_obj)


def stream(*, stream=Stream.create_new, device_id=None):
    """Wrap a compatible stream object (or create a new stream when `stream` is omitted).
    `stream=None` returns None."""
    if stream is None:
        return None
    if isinstance(stream, Stream):
        if device_id is not None and device_id != stream.device_id:
            raise ValueError(f"The device_id {device_id} doesn't match the id {stream.device_id} "
                             f"found in the stream object.")
        return stream
    return Stream(stream=stream, device_id=device_id)


# --- process-wide default streams (set_default_stream) and the thread's current stream --------

_global_streams = {}  # device_id -> Stream
_version = 0  # bumped on every change, so contexts can cache the resolved stream
_lazy = {}  # device_id -> Stream wrapping _backend.default_stream(device_id)
_cuda = None


# True: no CUDA device and no stream ever set, so every context's stream is None (checked by
# EvalContext.cuda_stream first, on every operator call). None: not probed yet.
_trivial = None


def _probe_trivial():
    global _trivial
    _trivial = not cuda_available() and not _global_streams and _version == 0
    return _trivial


def _bump():
    global _version, _trivial
    _version += 1
    _trivial = False


def cuda_available():
    """Whether a CUDA device is usable (probed once, lazily: never at import)."""
    global _cuda
    if _cuda is None:
        _cuda = _be.cuda_device_count() > 0
    return _cuda


def set_default_stream(cuda_stream, /, device_id=None):
    """Set (None: clear) the default stream of a device: used by every context whose thread
    has no current stream. The device is `device_id`, else the stream's, else the current one.
    Meant to be called once, at the start of the program."""
    if cuda_stream is not None:
        cuda_stream = stream(stream=cuda_stream, device_id=device_id)
        if device_id is None:
            device_id = cuda_stream.device_id
    if device_id is None:
        device_id = _b.GetCUDACurrentDevice()
    if cuda_stream is None:
        _global_streams.pop(device_id, None)
    else:
        _global_streams[device_id] = cuda_stream
    _bump()


def get_default_stream(device_id=None):
    """The stream set by `set_default_stream` for the device (current device if None), or
    None."""
    if not _global_streams:
        return None
    if device_id is None:
        device_id = _b.GetCUDACurrentDevice()
    return _global_streams.get(device_id)


class _TLS(threading.local):
    def __init__(self):
        self.current = {}  # device_id -> Stream (set_current_stream)


_tls = _TLS()


def _current_device_for_streams():
    from . import _device

    return _device._current_gpu_id()


def set_current_stream(cuda_stream, /):
    """Set (None: reset) the stream of the calling thread's default context for the current
    device; contexts created afterwards on this thread and device also take it. Setting a
    stream does not synchronize it with work already scheduled."""
    if cuda_stream is None:
        if _tls.current:
            dev = _current_device_for_streams()
            _tls.current.pop(dev, None)
            _bump()
        return
    dev = _current_device_for_streams()
    _tls.current[dev] = stream(stream=cuda_stream, device_id=dev)
    _bump()


def get_current_stream():
    """The stream of the calling thread's default context (`EvalContext.default().cuda_stream`):
    None where there is no CUDA device."""
    from ._eval import EvalContext

    return EvalContext.default().cuda_stream


def _thread_current(device_id):
    cur = _tls.current
    return cur.get(device_id) if cur else None


def _resolve(device_id):
    """The stream a context without its own stream uses on `device_id` (see module doc); None
    where none was set and there is no CUDA device."""
    s = _thread_current(device_id)
    if s is None:
        s = _global_streams.get(device_id) if _global_streams else None
    if s is None:
        s = _lazy.get(device_id)
        if s is None:
            if not cuda_available():
                return None
            s = _lazy[device_id] = Stream(stream=_be.default_stream(device_id),
                                          device_id=device_id)
    return s


def backend_stream(s):
    """What to hand to the backend for a stream-like value (None stays None)."""
    if s is None:
        return None
    obj = getattr(s, "_backend_obj", None)
    return obj if obj is not None else s


__all__ = ["Stream", "stream", "get_default_stream", "set_default_stream", "get_current_stream",
           "set_current_stream"]


def _backend_stream_for_device(device_id):
    s = _resolve(device_id)
    return _be.default_stream(device_id) if s is None else s._backend_obj


_be.stream_for_device = _backend_stream_for_device
