"""``to_torch_tensor(tl[i], copy)`` (``nvidia.dali.plugin.pytorch.torch_utils``) ->
``batch.select(i).torch(copy=copy)``.

``to_torch_tensor`` reads a TensorCPU/TensorGPU (``dtype`` looked up in its own table, ``shape()``
called): given the ndd.Tensor that ``select(i)`` returns it raises. ``Tensor.torch(copy=...)`` gives
the same torch tensor: same dtype, shape, values and device; a copy where ``copy`` is true, else
a tensor sharing the memory (DLPack), as ``to_torch_tensor`` does.
"""

import libcst as cst
from dali_migrate import match as m

from dali_migrate.rules.base import CallSiteRule

QUALIFIED = ("nvidia.dali.plugin.pytorch.torch_utils.to_torch_tensor", "nvidia.dali.plugin.pytorch.to_torch_tensor")


def call_of(sample, parents, names):
    """The ``to_torch_tensor(...)`` call whose tensor is ``sample`` (``tl[i]`` / ``tl.at(i)``), or None."""
    arg = parents.of(sample)
    call = parents.of(arg) if isinstance(arg, cst.Arg) else None
    if not (isinstance(call, cst.Call) and call.args and call.args[0] is arg and arg.keyword is None and not arg.star):
        return None
    if names is None or names.qualify(call.func) not in QUALIFIED:
        return None
    return call


def _copy(call):
    rest = call.args[1:]
    if len(rest) != 1 or rest[0].star or (rest[0].keyword is not None and rest[0].keyword.value != "copy"):
        return None
    return rest[0].value


def _blocker(call, site):
    if _copy(call) is None:
        return "to_torch_tensor(...) without exactly one copy argument: convert by hand"
    return None


def _rewrite(call, receiver, site):
    from dali_migrate.rules import batch_select

    sample = call.args[0].value
    if isinstance(sample, cst.Subscript):
        selected = batch_select.RULE.rewrite(sample, sample.value, site)
    else:  # tl.at(i): the ndd.Tensor, not np.asarray of it, on the CPU too
        selected = sample.with_changes(func=sample.func.with_changes(attr=cst.Name("select")))
    copy = _copy(call)
    args = [] if m.matches(copy, m.Name("False")) else [
        cst.Arg(keyword=cst.Name("copy"), value=copy, equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
    ]
    return cst.Call(func=cst.Attribute(value=selected, attr=cst.Name("torch")), args=args)


RULE = CallSiteRule(
    id="sample-to-torch",
    summary="to_torch_tensor(tl[i], copy) becomes batch.select(i).torch(copy=copy)",
    receiver="batch",
    methods=("__to_torch__",),
    rewrite=_rewrite,
    blocker=_blocker,
)
