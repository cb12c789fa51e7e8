"""`ndd.capture`: capture-mode helpers. The runtime has no capture mode (every call runs
eagerly, already cheaper per call than eager ndd), so `invariant(value)` returns `value` itself:
code written for native capture mode runs unchanged."""


def invariant(value):
    """Native: mark `value` as unchanging between capture-mode iterations (a proxy). Eagerly
    there is nothing to promise: the value itself is returned."""
    return value


__all__ = ["invariant"]
