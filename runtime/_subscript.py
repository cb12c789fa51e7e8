"""Indexing inside samples (`tensor[...]`, `batch.slice[...]`) via DALI's _TensorSubscript,
the operator pipeline mode uses for `DataNode[...]`."""


def _is_full(r):
    return isinstance(r, slice) and r.start is None and r.stop is None and r.step is None


def subscript(x, index):
    from . import _ops

    ranges = index if isinstance(index, tuple) else (index,)
    if not ranges or all(_is_full(r) for r in ranges):
        return x
    args = {}
    d = 0
    for i, r in enumerate(ranges):
        if r is Ellipsis:
            d = x.ndim - len(ranges) + i + 1
        elif isinstance(r, slice):
            for part, name in ((r.start, "lo"), (r.stop, "hi"), (r.step, "step")):
                if part is not None:
                    args[f"{name}_{d}"] = part
            d += 1
        else:
            args[f"at_{d}"] = r
            d += 1
    return _ops.call_schema("_TensorSubscript", x, **args)
