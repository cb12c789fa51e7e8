"""``tl.as_tensor()`` -> ``ndd.as_tensor(batch)``: a uniform batch as one dense tensor.

What the original got was a backend TensorCPU/TensorGPU, whose ``shape()``, ``layout()``,
``as_cpu()``, ``squeeze()``... are methods; on the ndd.Tensor ``shape`` and ``layout`` are
properties and the others differ, so ``tl.as_tensor().shape()`` converted as it stands would raise.
Where the dense tensor's own attributes are used (directly, or through the one name it is bound
to in its scope), the statement is left to a person; passing it on (``np.asarray(...)``,
``torch.from_dlpack(...)``) converts.
"""

import libcst as cst

from dali_migrate.bound_uses import attribute_use
from dali_migrate.cst_util import attr_chain
from dali_migrate.rules.base import CallSiteRule


def _rewrite(call, receiver, site):
    return cst.Call(func=attr_chain(f"{site.ndd}.as_tensor"), args=[cst.Arg(receiver)])


def _blocker(call, site):
    if site.parents is None:
        return None
    use = attribute_use(call, site.parents)
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
