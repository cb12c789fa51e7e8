"""Arithmetic on Tensors/Batches through DALI's ArithmeticGenericOp, as pipeline mode does.

Python scalars become typed constants in the expression (`$0:int32`), exactly like
`DataNode + 3` in a pipeline, so results (including type promotion) match pipeline mode.
"""


def arith(name, *args):
    from . import _ops

    return _ops.arithmetic(name, *args)


def _binary(name):
    def op(self, other):
        return arith(name, self, other)

    def rop(self, other):
        return arith(name, other, self)

    return op, rop


class ArithmeticMixin:
    __add__, __radd__ = _binary("add")
    __sub__, __rsub__ = _binary("sub")
    __mul__, __rmul__ = _binary("mul")
    __truediv__, __rtruediv__ = _binary("fdiv")
    __floordiv__, __rfloordiv__ = _binary("div")
    __mod__, __rmod__ = _binary("mod")
    __pow__, __rpow__ = _binary("pow")
    __and__, __rand__ = _binary("bitand")
    __or__, __ror__ = _binary("bitor")
    __xor__, __rxor__ = _binary("bitxor")
    __lshift__, __rlshift__ = _binary("lshift")
    __rshift__, __rrshift__ = _binary("rshift")
    __eq__ = _binary("eq")[0]
    __ne__ = _binary("neq")[0]
    __lt__ = _binary("lt")[0]
    __le__ = _binary("leq")[0]
    __gt__ = _binary("gt")[0]
    __ge__ = _binary("geq")[0]
    __hash__ = object.__hash__  # defining __eq__ would otherwise drop hashing

    def __neg__(self):
        return arith("minus", self)

    def __pos__(self):
        return self

    def __abs__(self):
        return arith("abs", self)

    def __invert__(self):
        return arith("bitnot", self)
