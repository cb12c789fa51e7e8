"""``tl.at(i)`` and ``tl[i]`` -> ``batch.select(i)``: an ndd.Batch has no ``__getitem__`` (it raises
TypeError so that a sample index is never confused with an index inside each sample).

``tl[i]`` gave a TensorCPU or a TensorGPU, whose counterpart is the ndd.Tensor ``select(i)`` gives.
``TensorListCPU.at(i)`` returns a numpy array, ``TensorListGPU.at(i)`` a TensorGPU: where the batch
is known to be on the CPU (a pipeline without GPU operators, or after ``.as_cpu()``), ``.at(i)``
becomes ``np.array(batch.select(i))``, so that numpy methods and numpy arithmetic still apply (a
copy, as ``at(i)`` gives: a change to it must not reach the batch).
Elsewhere the batch may be on either device (a CPU output of a pipeline with GPU operators, such as
a reader's labels; a device chosen by a parameter), and ``.at(i)`` becomes a call of a function
written into the file that gives a numpy array for a CPU batch and the sample for a GPU one, as
DALI does.

Left to a person: a ``tl[i]`` kept in a name whose attributes the code then reads (``t = tl[i]``,
``t.shape()``, ``t.copy_to_external(ptr)``: TensorCPU/TensorGPU methods that the ndd.Tensor names
otherwise or lacks), or hands to a function of the file, which dali-migrate does not follow into."""

import libcst as cst
from dali_migrate import match as m

from dali_migrate.bound_uses import attribute_use, passed_to_own_function
from dali_migrate.cst_util import attr_chain, fresh_name
from dali_migrate.rules.base import CallSiteRule

HELPER = "sample-at"
_BASE = "sample_at"
_SOURCE = '''def {name}(batch, i):
    """TensorList.at(i) on an ndd.Batch (added by dali-migrate): as in pipeline mode, a sample of a
    CPU batch is a numpy array, one of a GPU batch the sample itself."""
    sample = batch.select(i)
    return {numpy}.array(sample) if batch.device.device_type == "cpu" else sample
'''


def _on_cpu(receiver, site) -> bool:
    if not site.pipeline.uses_gpu and not getattr(site, "any_device", False):
        return True
    return isinstance(receiver, cst.Call) and m.matches(receiver.func, m.Attribute(attr=m.Name("cpu") | m.Name("as_cpu")))


def _helper_name(site) -> str:
    # the same for every use in the file (site.taken is the module's names)
    return fresh_name(_BASE, set(site.taken)) if _BASE in site.taken else _BASE


def _needs(node, site) -> dict:
    if isinstance(node, cst.Subscript) or _on_cpu(node.func.value, site):
        return {}
    return {HELPER: _SOURCE.format(name=_helper_name(site), numpy=site.numpy)}


def _blocker(node, site):
    # (``tl[i].shape()`` and ``tl[i].as_cpu()`` are decided where the call sites are planned)
    if not isinstance(node, cst.Subscript) or site.parents is None:
        return None
    use = attribute_use(node, site.parents, bound_only=True)
    if use is not None:
        return (f"a sample of a TensorList (a TensorCPU/TensorGPU) is kept here and its attributes are read "
                f"(`{use}`): they differ on the ndd.Tensor that batch.select(i) gives (shape and layout are "
                f"properties there, and it has no copy_to_external or as_cpu): convert by hand")
    func = passed_to_own_function(node, site.parents)
    if func is not None:
        return (f"a sample of a TensorList (a TensorCPU/TensorGPU) goes to {func}(), which dali-migrate does "
                f"not follow: what it does with it may not work on the ndd.Tensor that batch.select(i) "
                f"gives; convert by hand")
    return None


def _rewrite(node, receiver, site):
    if isinstance(node, cst.Subscript):
        index = node.slice[0].slice.value
        return cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name("select")), args=[cst.Arg(index)])
    selected = node.with_changes(func=node.func.with_changes(attr=cst.Name("select")))
    if _on_cpu(receiver, site):
        return cst.Call(func=attr_chain(f"{site.numpy}.array"), args=[cst.Arg(selected)])
    return node.with_changes(func=cst.Name(_helper_name(site)), args=[cst.Arg(receiver), *node.args])


RULE = CallSiteRule(
    id="batch-select",
    summary="TensorList.at(i) and tl[i] become Batch.select(i)",
    receiver="batch",
    methods=("at", "__getitem__"),
    rewrite=_rewrite,
    blocker=_blocker,
    needs=_needs,
)
