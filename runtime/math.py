"""`ndd.math`: elementwise math functions, mirroring `nvidia.dali.math` (generated from it:
every public function there is `_arithm_op("<its name>", *args)`)."""

import inspect as _inspect

import nvidia.dali.math as _dali_math

from ._arith import arith as _arith


def _make(name, sig):
    def f(*args):
        return _arith(name, *args)

    f.__name__ = f.__qualname__ = name
    f.__signature__ = sig.replace(return_annotation=_inspect.Signature.empty)
    f.__doc__ = getattr(_dali_math, name).__doc__
    return f


for _name, _f in vars(_dali_math).items():
    if _name.startswith("_") or not _inspect.isfunction(_f) or _f.__module__ != _dali_math.__name__:
        continue
    globals()[_name] = _make(_name, _inspect.signature(_f))
