"""``tl.as_tensor()`` -> ``ndd.as_tensor(batch)``: a uniform batch as one dense tensor.

What the original got was a backend TensorCPU/TensorGPU, whose ``shape()``, ``layout()``,
``as_cpu()``, ``squeeze()``... are methods; on the ndd.Tensor ``shape`` and ``layout`` are
properties and the others differ, so ``tl.as_tensor().shape()`` converted as it stands would raise.
Where the dense tensor's own attributes are used (directly, or through the one name it is bound
to in its scope), the statement is left to a person; passing it on (``np.asarray(...)``,
``torch.from_dlpack(...)``) converts.
"""

import libcst as cst

from dali_migrate.cst_util import attr_chain
from dali_migrate.rules.base import CallSiteRule


def _rewrite(call, receiver, site):
    return cst.Call(func=attr_chain(f"{site.ndd}.as_tensor"), args=[cst.Arg(receiver)])


def _attribute_use(call, parents):
    """`call.attr` or `name.attr` for the name `call` is assigned to: the attribute's source, or None."""
    parent = parents.of(call)
    if isinstance(parent, cst.Attribute) and parent.value is call:
        return parent.attr.value
    target = None
    if isinstance(parent, cst.Assign) and parent.value is call and len(parent.targets) == 1:
        target = parent.targets[0].target
    elif isinstance(parent, cst.AnnAssign) and parent.value is call:
        target = parent.target
    if not isinstance(target, cst.Name):
        return None
    scope = parents.scope(call)
    for name in parents.names(target.value):
        if parents.scope(name) is not scope:
            continue
        up = parents.of(name)
        if isinstance(up, cst.Attribute) and up.value is name:
            return f"{target.value}.{up.attr.value}"
    return None


def _blocker(call, site):
    if site.parents is None:
        return None
    use = _attribute_use(call, site.parents)
    if use is None:
        return None
    return (f"TensorList.as_tensor() gives a backend TensorCPU/TensorGPU here, whose methods "
            f"(`{use}`) differ on the ndd.Tensor that ndd.as_tensor(batch) gives (shape and layout "
            f"are properties there): convert by hand")


RULE = CallSiteRule(
    id="batch-as-tensor",
    summary="TensorList.as_tensor() becomes ndd.as_tensor(batch)",
    receiver="batch",
    methods=("as_tensor",),
    rewrite=_rewrite,
    blocker=_blocker,
)
