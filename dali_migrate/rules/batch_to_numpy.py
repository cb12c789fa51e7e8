"""``np.array(tl)`` / ``np.asarray(tl)`` of a whole TensorList -> ``np.array(ndd.as_tensor(batch))``.

A ``TensorListCPU`` hands numpy its samples as one dense array (``__array__``: a (batch, ...)
array); an ``ndd.Batch`` has no such protocol, and numpy makes a 0-d object array of it, with no
error. ``ndd.as_tensor(batch)`` is the dense tensor numpy reads as the TensorList's array (the same
values, dtype and shape; it raises where the samples' shapes differ, as ``as_tensor()`` did). The
call keeps its function and its other arguments (``np.asarray(tl, dtype=np.float32)``).
"""

import libcst as cst

from dali_migrate import match as m
from dali_migrate.cst_util import attr_chain
from dali_migrate.rules.base import CallSiteRule

_FUNCTIONS = ("array", "asarray", "ascontiguousarray")


def call_of(batch, parents, site):
    """The numpy call whose first argument is ``batch`` (a TensorList expression), or None."""
    arg = parents.of(batch)
    call = parents.of(arg) if isinstance(arg, cst.Arg) else None
    if not (isinstance(call, cst.Call) and call.args and call.args[0] is arg and arg.keyword is None and not arg.star):
        return None
    if not site.numpy or not m.matches(call.func, m.Attribute(value=m.Name(site.numpy), attr=m.Name())) \
            or call.func.attr.value not in _FUNCTIONS:
        return None
    return call


def _rewrite(call, receiver, site):
    dense = cst.Call(func=attr_chain(f"{site.ndd}.as_tensor"), args=[cst.Arg(call.args[0].value)])
    return call.with_changes(args=[call.args[0].with_changes(value=dense), *call.args[1:]])


RULE = CallSiteRule(
    id="batch-to-numpy",
    summary="np.array(tl) of a whole TensorList becomes np.array(ndd.as_tensor(batch))",
    receiver="batch",
    methods=("__numpy__",),
    rewrite=_rewrite,
)
