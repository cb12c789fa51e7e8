"""`Device`: where data lives and operators run ("cpu" or "gpu[:id]"), usable as a context manager.

Mirrors native ndd's Device API. The default device is CPU unless a `with Device("gpu")` block is
active: the runtime never probes CUDA at import (DALI 1.53's ndd fails without a driver there).
"""

import threading


class Device:
    def __init__(self, name, device_id=None):
        if isinstance(name, Device):
            name, device_id = name.device_type, name.device_id if device_id is None else device_id
        if ":" in name:
            name, sid = name.split(":", 1)
            if device_id is not None and int(sid) != device_id:
                raise ValueError(f"Conflicting device id in {name}:{sid} and device_id={device_id}")
            device_id = int(sid)
        if name == "mixed":  # native 2.x says exactly this
            raise ValueError("Invalid device type: mixed")
        if name not in ("cpu", "gpu"):
            raise ValueError(f"Invalid device type: {name}")
        if name == "gpu" and device_id is None:
            device_id = _current_gpu_id()
        if name == "cpu":
            device_id = None
        self.device_type = name
        self.device_id = device_id

    def __str__(self):
        return self.device_type if self.device_id is None else f"{self.device_type}:{self.device_id}"

    def __repr__(self):
        if self.device_id is None:
            return f"Device(device_type='{self.device_type}')"
        return f"Device(device_type='{self.device_type}', device_id={self.device_id})"

    def __eq__(self, other):
        if isinstance(other, str):
            other = Device(other)
        if not isinstance(other, Device):
            return NotImplemented
        return self.device_type == other.device_type and self.device_id == other.device_id

    def __hash__(self):
        return hash((self.device_type, self.device_id))

    @staticmethod
    def current():
        stack = _tls.stack
        return stack[-1] if stack else CPU

    def __enter__(self):
        _tls.stack.append(self)
        return self

    def __exit__(self, *exc):
        _tls.stack.pop()


class _TLS(threading.local):
    def __init__(self):
        self.stack = []


_tls = _TLS()


def _current_gpu_id():
    for d in reversed(_tls.stack):
        if d.device_type == "gpu":
            return d.device_id
    return 0


CPU = Device("cpu")
Device.CPU = CPU


def device(obj, id=None):  # noqa: A002 - same name as ndd
    """Device from a Device, a string ("cpu", "gpu", "gpu:1") or a DLPack device tuple."""
    if obj is None:
        return None
    if isinstance(obj, Device):
        return obj if id is None or id == obj.device_id else Device(obj.device_type, id)
    if isinstance(obj, tuple):  # __dlpack_device__
        kind, dev_id = int(obj[0]), int(obj[1])
        return CPU if kind in (1, 3) else Device("gpu", dev_id)
    return Device(str(obj), id)


__all__ = ["Device", "device"]
