"""``type(tl) == backend.TensorListGPU`` / ``isinstance(tl, TensorListGPU)`` -> ``batch.device.device_type == "gpu"``.

A pipeline output is a TensorListCPU or a TensorListGPU (neither has subclasses), so asking for its
class asks where it is; an ndd.Batch says that in ``batch.device.device_type`` ("cpu" or "gpu").
``==`` / ``is`` and ``!=`` / ``is not`` keep their sense. Any other class, or a check written
another way (``type(tl).__name__``, a tuple of classes), is left to a person.
"""

import libcst as cst
from dali_migrate import match as m

from dali_migrate.rules.base import CallSiteRule

_MODULES = ("nvidia.dali.backend", "nvidia.dali.backend_impl", "nvidia.dali.tensors")
_DEVICES = {f"{mod}.TensorList{dev.upper()}": dev for mod in _MODULES for dev in ("cpu", "gpu")}
_SAME = (cst.Equal, cst.Is)
_OTHER = (cst.NotEqual, cst.IsNot)


def _type_call(expr) -> bool:
    return isinstance(expr, cst.Call) and m.matches(expr.func, m.Name("type")) and len(expr.args) == 1


def _parts(node):
    """(the class expression, negated) of ``type(x) == C`` / ``C != type(x)`` / ``isinstance(x, C)``."""
    if isinstance(node, cst.Call):
        return node.args[1].value, False
    target = node.comparisons[0]
    cls = target.comparator if _type_call(node.left) else node.left
    return cls, isinstance(target.operator, _OTHER)


def _device(node, site):
    cls, _ = _parts(node)
    return _DEVICES.get(site.names.qualify(cls) or "") if site.names is not None else None


def _blocker(node, site):
    if _device(node, site) is None:
        cls, _ = _parts(node)
        return f"a pipeline output's class is compared with {cst.Module([]).code_for_node(cls)}, which is not TensorListCPU/TensorListGPU: convert by hand"
    return None


def _rewrite(node, receiver, site):
    _, negated = _parts(node)
    device_type = cst.Attribute(value=cst.Attribute(value=receiver, attr=cst.Name("device")), attr=cst.Name("device_type"))
    op = cst.NotEqual() if negated else cst.Equal()
    new = cst.Comparison(left=device_type, comparisons=[cst.ComparisonTarget(operator=op, comparator=cst.SimpleString(f'"{_device(node, site)}"'))])
    return new.with_changes(lpar=node.lpar, rpar=node.rpar)


def receiver(node):
    """The output whose class ``node`` checks."""
    if isinstance(node, cst.Call):
        return node.args[0].value
    return (node.left if _type_call(node.left) else node.comparisons[0].comparator).args[0].value


def matches(node) -> bool:
    """Is ``node`` a check of this form (the class not yet looked at)?"""
    if isinstance(node, cst.Call):
        return (
            m.matches(node.func, m.Name("isinstance"))
            and len(node.args) == 2
            and not any(a.star or a.keyword for a in node.args)
        )
    if not isinstance(node, cst.Comparison) or len(node.comparisons) != 1:
        return False
    target = node.comparisons[0]
    if not isinstance(target.operator, (*_SAME, *_OTHER)):
        return False
    sides = [node.left, target.comparator]
    return sum(_type_call(x) for x in sides) == 1 and not any(
        a.star or a.keyword for x in sides if _type_call(x) for a in x.args
    )


RULE = CallSiteRule(
    id="batch-device-check",
    summary='type(tl) == TensorListGPU / isinstance(tl, TensorListGPU) becomes batch.device.device_type == "gpu"',
    receiver="batch",
    methods=("__device_check__",),
    rewrite=_rewrite,
    blocker=_blocker,
)
