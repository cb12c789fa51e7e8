"""Module-level functions that build DALI operators, inlined into the @pipeline_def functions that call them.

Real code splits a pipeline's augmentations into functions (``images = processing_pipe(jpegs, ...)``).
``fn.*`` only works while a pipeline is being defined, so such a function cannot be called as it is
from a converted pipeline. Writing its statements into each calling pipeline, at the call, makes the
pipeline look as if the user had written the operators there: the rest of the codemod (ndd names,
``batch_size=``/``rng=`` on random operators, seeds in graph order, verify's operator matching) then
needs nothing of its own. Python calls of the helper (``random.uniform``) become the pipeline's, which
the build-time-calls rule evaluates once before the loop, as the pipeline evaluated them when it was
built.

The inlining itself is the one the legacy classes use for their methods (``legacy._inline_helpers``):
arguments bound in Python's evaluation order, defaults only when names or literals, the helper's
variables renamed only where they would clash, ``if True/False`` reduced, fresh nodes. This module
chooses the helpers and the pipelines and drops the definitions nothing uses any more; the engine
puts a pipeline back as it was (and the helper with its marker) when it does not convert after all.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst
import libcst.matchers as m

from dali_migrate import legacy
from dali_migrate.cst_util import code, names_in
from dali_migrate.pipeline_analysis import _assigned_names, helpers_with_ops, pipeline_decorator


def _module_bindings(module: cst.Module) -> dict:
    """{name: how many module-level statements bind it} (defs, classes, imports, assignments)."""
    count: dict = {}
    for stmt in module.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            bound = {stmt.name.value}
        else:
            bound = set(_assigned_names(stmt))
            for imp in m.findall(stmt, m.Import() | m.ImportFrom()):
                if isinstance(imp.names, cst.ImportStar):
                    continue
                for alias in imp.names:
                    if alias.asname is not None:
                        bound |= names_in(alias.asname.name)
                    else:
                        bound.add(code(alias.name).split(".")[0])
        for name in bound:
            count[name] = count.get(name, 0) + 1
    return count


def _straight_line(stmts) -> bool:
    """Simple statements and ``if`` blocks of them: what may stand in a pipeline as it stands in the helper."""
    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            continue
        if isinstance(stmt, cst.If) and isinstance(stmt.body, cst.IndentedBlock) and _straight_line(stmt.body.body):
            orelse = stmt.orelse
            if orelse is None or (isinstance(orelse, cst.If) and _straight_line([orelse])):
                continue
            if isinstance(orelse, cst.Else) and isinstance(orelse.body, cst.IndentedBlock) and _straight_line(orelse.body.body):
                continue
        return False
    return True


def _globals_declared(module: cst.Module) -> set:
    return {n.name.value for g in m.findall(module, m.Global()) for n in g.names}


def candidates(module: cst.Module, names) -> dict:
    """{name: FunctionDef} of the module's functions that build operators (themselves or through each
    other) and have the shape that can be inlined: defined once, plain ``def``, straight-line body."""
    with_ops = helpers_with_ops(module, names)
    defs = {
        s.name.value: s for s in module.body
        if isinstance(s, cst.FunctionDef) and pipeline_decorator(s, names) is None
    }
    # a function that calls a helper builds operators too, though it spells no fn.* itself
    building = set(with_ops)
    grew = True
    while grew:
        grew = False
        for name, func in defs.items():
            if name not in building and legacy._helper_calls_in([func], {k: None for k in building}, method=False):
                building.add(name)
                grew = True
    once = _module_bindings(module)
    rebound = _globals_declared(module)
    found: dict = {}
    for name in sorted(building):
        func = defs[name]
        if once.get(name) != 1 or name in rebound or func.decorators or func.asynchronous is not None:
            continue
        if not isinstance(func.body, cst.IndentedBlock) or not _straight_line(legacy._body(func)):
            continue
        found[name] = func
    return found


def _params(func: cst.FunctionDef) -> set:
    p = func.params
    return {q.name.value for q in [*p.posonly_params, *p.params, *p.kwonly_params]} | {
        q.name.value for q in (p.star_arg, p.star_kwarg) if isinstance(q, cst.Param)
    }


def _inline_into(func: cst.FunctionDef, helpers: dict, used: set) -> Optional[cst.FunctionDef]:
    """``func`` with the helper calls of its body inlined; None when there are none or one cannot be."""
    if not isinstance(func.body, cst.IndentedBlock):
        return None
    body = list(func.body.body)
    if not legacy._helper_calls_in(body, helpers, method=False):
        return None
    params = _params(func)
    if (params | legacy._assigned(*body)) & set(helpers):
        return None  # the pipeline's own variable of that name is what it calls
    try:
        new_body = legacy._inline_helpers(body, helpers, params | set(legacy._SETTINGS), set(), used, method=False)
    except legacy._NotSimple:
        return None
    return func.with_changes(body=func.body.with_changes(body=new_body))


def _references(module: cst.Module, name: str, outside: set) -> bool:
    """Whether the module uses ``name`` other than in the definitions named in ``outside`` (a string
    spelling it counts: ``__all__``, getattr)."""
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value in outside:
            continue
        if name in names_in(stmt) or any(s.raw_value == name for s in m.findall(stmt, m.SimpleString())):
            return True
    return False


def inline(module: cst.Module, names, skip: set) -> tuple:
    """(module with helpers inlined into the module-level pipelines not in ``skip`` and the helpers
    nothing else uses removed, {pipeline name: helper names it had inlined})."""
    helpers = candidates(module, names)
    if not helpers:
        return module, {}
    used = set(names_in(module))
    defined = _module_bindings(module)
    inlined: dict = {}
    body = []
    for stmt in module.body:
        if (
            isinstance(stmt, cst.FunctionDef)
            and stmt.name.value not in skip
            and defined.get(stmt.name.value) == 1
            and pipeline_decorator(stmt, names) is not None
        ):
            new = _inline_into(stmt, helpers, used)
            if new is not None:
                inlined[stmt.name.value] = legacy._reached([list(stmt.body.body)], helpers, method=False)
                stmt = new
        body.append(stmt)
    if not inlined:
        return module, {}
    module = module.with_changes(body=body)
    # A helper every use of which was inlined goes: it would keep pipeline mode's imports alive.
    removable = set().union(*inlined.values())
    changed = True
    while changed:
        changed = False
        for name in sorted(removable):
            if _references(module, name, removable):
                removable.discard(name)
                changed = True
    if removable:
        module = module.with_changes(
            body=[s for s in module.body if not (isinstance(s, cst.FunctionDef) and s.name.value in removable)]
        )
    return module, inlined
