"""Objects given to a pipeline and changed in place after it is made.

A pipeline read its arguments when it was made (``pipe = list_pipe(files=files)``): its reader got
the list as it was then. The converted pipeline is a generator, whose body runs at the first
``next()`` and reads the same object again each iteration, so ``files.append(...)`` between the two
gives it another list than the pipeline had. Rebinding the name does not matter (the generator
holds the object it was given); changing the object does. This finds such changes in the code that
follows the call in its scope, for arguments that are names or attribute chains (``args.files``).
A method called on the object counts as a change unless it is one of the common methods that leave
builtin strings, containers and NumPy arrays as they are.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from dali_migrate import cst_walk
from dali_migrate.cst_util import code, dotted

# Methods of str, list, dict, set, tuple and numpy.ndarray that do not change their object.
_READ_ONLY = frozenset({
    "get", "keys", "values", "items", "copy", "count", "index", "startswith", "endswith", "format", "split",
    "rsplit", "splitlines", "join", "strip", "lstrip", "rstrip", "lower", "upper", "replace", "find", "rfind",
    "encode", "decode", "isdigit", "isalpha", "tolist", "astype", "item", "sum", "mean", "min", "max", "any",
    "all", "reshape", "flatten", "ravel", "transpose", "tobytes", "union", "intersection", "difference",
    "issubset", "issuperset", "isdisjoint", "__len__", "__contains__", "__getitem__",
})


def _changed(node) -> Optional[str]:
    """The path of the object that ``node`` (one node of a statement) changes in place, or None."""
    kind = type(node)
    if kind is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value not in _READ_ONLY:
        return dotted(node.func.value)
    if kind is cst.AugAssign:
        # `files += [...]` extends a list in place; on an int it binds a new one, which is harmless
        target = node.target
        return dotted(target.value) if isinstance(target, (cst.Subscript, cst.Attribute)) else dotted(target)
    if kind is cst.AssignTarget or kind is cst.Del or kind is cst.AnnAssign:
        target = node.target
        if isinstance(target, (cst.Subscript, cst.Attribute)):
            return dotted(target.value)
    return None


def _reached_from(changed: str, given: str) -> bool:
    """Does changing the object at ``changed`` change what the argument ``given`` holds?"""
    return changed == given or changed.startswith(given + ".")


def changed_after(call: cst.Call, stmt, parents, given_to: str = "the pipeline") -> Optional[str]:
    """Why the objects ``call`` (which makes a pipeline, in statement ``stmt``) gives the pipeline
    may differ when the converted generator reads them, or None. ``given_to``: what the call is,
    for the message (a factory that makes the pipeline reads them for it)."""
    given = []
    for arg in call.args:
        path = dotted(arg.value)
        if path is not None and path not in given:
            given.append(path)
    if not given:
        return None
    scope = parents.scope(stmt)
    span = parents.span.get(id(stmt))
    if span is None:
        return None
    end = span[1]
    for node in parents.find(cst.SimpleStatementLine, within=scope):
        # (statements of the same scope after the call; a function defined there runs who knows when)
        if parents.span[id(node)][0] < end or parents.scope(node) is not scope:
            continue
        for inner in cst_walk.walk(node):
            path = _changed(inner)
            if path is None:
                continue
            hit = next((g for g in given if _reached_from(path, g)), None)
            if hit is not None:
                return (
                    f"`{hit}` is given to {given_to} and changed in place afterwards (`{'; '.join(code(b) for b in node.body)}`): the "
                    f"pipeline read it when it was made, the converted generator would read it when it first runs "
                    f"and each iteration; convert by hand"
                )
    return None
