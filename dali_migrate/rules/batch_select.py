"""``tl.at(i)`` and ``tl[i]`` -> ``batch.select(i)``: an ndd.Batch has no ``__getitem__`` (it raises
TypeError so that a sample index is never confused with an index inside each sample).

``TensorListCPU.at(i)`` returns a numpy array, ``select(i)`` an ndd.Tensor: where the batch is
known to be on the CPU (a pipeline without GPU operators, or after ``.as_cpu()``), ``.at(i)``
becomes ``np.asarray(batch.select(i))`` so that numpy methods and numpy arithmetic still apply.
On a GPU batch, ``.at(i)`` returned a TensorGPU and ``select(i)`` gives the matching ndd.Tensor."""

import libcst as cst
import libcst.matchers as m

from dali_migrate.cst_util import attr_chain
from dali_migrate.rules.base import CallSiteRule


def _on_cpu(receiver, site) -> bool:
    if not site.pipeline.uses_gpu:
        return True
    return isinstance(receiver, cst.Call) and m.matches(receiver.func, m.Attribute(attr=m.Name("cpu") | m.Name("as_cpu")))


def _rewrite(node, receiver, site):
    if isinstance(node, cst.Subscript):
        index = node.slice[0].slice.value
        return cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name("select")), args=[cst.Arg(index)])
    selected = node.with_changes(func=node.func.with_changes(attr=cst.Name("select")))
    if _on_cpu(receiver, site):
        return cst.Call(func=attr_chain(f"{site.numpy}.asarray"), args=[cst.Arg(selected)])
    return selected


RULE = CallSiteRule(
    id="batch-select",
    summary="TensorList.at(i) and tl[i] become Batch.select(i)",
    receiver="batch",
    methods=("at", "__getitem__"),
    rewrite=_rewrite,
)
