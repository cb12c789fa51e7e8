"""``pipe.device_id`` -> the device id the pipeline is made with (the converted generator has no
attributes), where the code shows what DALI returns:

    for i, device in enumerate(jax.devices()):          for i, device in enumerate(jax.devices()):
        pipe = p(..., shard_id=i, device_id=i)              pipe = p(..., shard_id=i, device_id=i)
        print(f"{pipe} on device {pipe.device_id}")          print(f"{pipe} on device {i}")

A Pipeline returns the ``device_id`` it was given, except that ``None`` (or the CPU-only id) reads
as None, and that after ``build()`` a pipeline given None with GPU operators reports the current
CUDA device. So the value is written in only where it is a non-negative integer for certain: an
integer literal (in the call or the decorator, or given to the function of the file that makes
and returns the pipeline, see ``call_sites.in_caller``), or the index of a loop over ``range(...)`` /
``enumerate(...)`` that holds both the call and the use, not assigned in the loop otherwise. Any
other value leaves the pipeline to a person, with a marker saying so.
"""

from __future__ import annotations

import libcst as cst
from dali_migrate import match as m

from dali_migrate.rules.base import CallSiteRule
from dali_migrate.rules.pipe_epoch_size import CannotConvert, made_value


def _value(node, site, checked=False):
    """The device id expression to write in for ``node`` (``pipe.device_id`` as written), or a reason
    (str); ``checked``: the blocker has accepted it (``node`` may be a rewritten copy)."""
    info = site.pipeline
    if site.construction is None and site.factory is None:
        return "the pipeline is made elsewhere (a factory, a caller), where its device_id cannot be read"
    if "device_id" in info.computed_settings:
        return "the pipeline's device_id is computed from its constructor's arguments"
    try:
        # made by a factory: what its caller gives it (an integer written out, here)
        value = made_value(site, info.setting("device_id"), "device_id")
    except CannotConvert as e:
        return str(e)
    if value is None:
        return "the pipeline is made without a device_id (DALI picks the current device when it builds)"
    if isinstance(value, cst.Integer):
        return value
    if isinstance(value, cst.Name) and site.construction is not None and (checked or _loop_index(value.value, site.construction, node, site.parents)):
        return cst.Name(value.value)
    return "its device_id is neither an integer written out nor the index of the loop that makes it (it may be None, which DALI reads differently)"


def _loop_index(name: str, construction, use, parents) -> bool:
    """Is ``name`` the index of a ``for`` over range()/enumerate() holding both nodes, bound nowhere
    else in the loop?"""
    if parents is None:
        return False
    loop = parents.of(construction)
    while loop is not None and not isinstance(loop, (cst.For, cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        loop = parents.of(loop)
    if not isinstance(loop, cst.For) or not parents.contains(loop.body, use):
        return False
    it, target = loop.iter, loop.target
    if not (isinstance(it, cst.Call) and len(it.args) >= 1 and not any(a.star or a.keyword for a in it.args)):
        return False
    if m.matches(it.func, m.Name("range")) and isinstance(target, cst.Name):
        index = target
    elif m.matches(it.func, m.Name("enumerate")) and len(it.args) == 1 and isinstance(target, cst.Tuple) and target.elements:
        index = target.elements[0].value
    else:
        return False
    from dali_migrate.call_sites import _is_binding, _shadowed

    if not (isinstance(index, cst.Name) and index.value == name) or _shadowed(it.func.value, parents):
        return False
    inner = [n for n in parents.names(name) if parents.contains(loop.body, n)]
    return not any(_is_binding(n, parents) or isinstance(parents.of(n), (cst.AugAssign, cst.NamedExpr, cst.Param, cst.AsName, cst.CompFor)) for n in inner)


def blocker(node, site):
    value = _value(node, site)
    if isinstance(value, str):
        return f"pipe.device_id: the converted generator has no device_id, and {value}: use the device id the pipeline is made with by hand"
    return None


RULE = CallSiteRule(
    id="pipe-device-id",
    summary="pipe.device_id becomes the device id the pipeline is made with (an integer written out, or the loop index that made it)",
    receiver="pipeline-attribute",
    methods=("device_id",),
    rewrite=lambda node, receiver, site: _value(node, site, checked=True).with_changes(lpar=node.lpar, rpar=node.rpar),
    blocker=blocker,
)
