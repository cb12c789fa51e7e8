"""Where a value that a call-site rule rewrites goes next: read directly, or through the one name
it is assigned to in its scope.

A rewrite can be exact for the value and still leave later code reading it the old way: ``tl[i]``
was a TensorGPU, whose ``shape()`` and ``copy_to_external()`` are methods an ndd.Tensor does not
have. The rules that give such a value ask here whether its own attributes are read, or whether it
is handed to a function of the file, which dali-migrate does not follow into."""

from typing import Optional

import libcst as cst


def _bound_name(node, parents) -> Optional[cst.Name]:
    parent = parents.of(node)
    target = None
    if isinstance(parent, cst.Assign) and parent.value is node and len(parent.targets) == 1:
        target = parent.targets[0].target
    elif isinstance(parent, cst.AnnAssign) and parent.value is node:
        target = parent.target
    return target if isinstance(target, cst.Name) else None


def _uses(node, parents, bound_only=False):
    """``node`` itself (unless ``bound_only``), then each Name of the same scope spelling the name
    it is bound to."""
    if not bound_only:
        yield node, None
    target = _bound_name(node, parents)
    if target is None:
        return
    scope = parents.scope(node)
    for name in parents.names(target.value):
        if name is not target and parents.scope(name) is scope:
            yield name, target.value


def attribute_use(node, parents, bound_only=False) -> Optional[str]:
    """`node.attr` or `name.attr` for the name `node` is assigned to: the attribute's source, or
    None. ``bound_only``: through the name only (the caller decides about `node.attr` itself)."""
    for use, name in _uses(node, parents, bound_only):
        up = parents.of(use)
        if isinstance(up, cst.Attribute) and up.value is use:
            return f"{name}.{up.attr.value}" if name else up.attr.value
    return None


def passed_to_own_function(node, parents) -> Optional[str]:
    """The name of a function this file defines that gets ``node`` (or the name it is bound to) as
    an argument, or None."""
    defined = {f.name.value for f in parents.find(cst.FunctionDef)}
    for use, _ in _uses(node, parents):
        arg = parents.of(use)
        call = parents.of(arg) if isinstance(arg, cst.Arg) and arg.value is use else None
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value in defined:
            return call.func.value
    return None
