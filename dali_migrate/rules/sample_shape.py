"""``tl[i].shape()`` -> ``list(batch.select(i).shape)``.

A sample of a TensorList (a TensorCPU or TensorGPU) gives its shape from a method, as a list of
ints; the ndd.Tensor that ``select(i)`` gives has a ``shape`` property holding a tuple. ``list(...)``
keeps what callers get: the same ints, in a list that compares equal to other lists, and can be
appended to or changed in place as before."""

import libcst as cst

from dali_migrate.rules.base import CallSiteRule


def call_of(sample, parents):
    """The ``tl[i].shape()`` call whose sample is ``sample`` (a ``tl[i]`` subscript), or None."""
    method = parents.of(sample)
    if not (isinstance(method, cst.Attribute) and method.value is sample and method.attr.value == "shape"):
        return None
    call = parents.of(method)
    if isinstance(call, cst.Call) and call.func is method and not call.args:
        return call
    return None


def _rewrite(call, receiver, site):
    from dali_migrate.rules import batch_select

    sample = call.func.value
    selected = batch_select.RULE.rewrite(sample, sample.value, site)
    return cst.Call(func=cst.Name("list"), args=[cst.Arg(cst.Attribute(value=selected, attr=cst.Name("shape")))])


RULE = CallSiteRule(
    id="sample-shape",
    summary="a sample's shape(), tl[i].shape(), becomes list(batch.select(i).shape)",
    receiver="batch",
    methods=("__sample_shape__",),
    rewrite=_rewrite,
)
