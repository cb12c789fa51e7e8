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

from dali_migrate import cst_walk, legacy
from dali_migrate.cst_util import code, names_in
from dali_migrate.pipeline_analysis import _assigned_names, helpers_with_ops, pipeline_decorator

# Statements (imports, ``global``) live only in statements: a walk for them need not enter
# expressions, nor small statements, which hold none (most of a file's nodes are in these).
_NO_STATEMENTS_INSIDE = (cst.BaseExpression, cst.BaseSmallStatement)


def _statement_level(node: cst.CSTNode):
    """``node`` and every node under it that is not inside an expression or a small statement."""
    return cst_walk.walk(node, not_into=_NO_STATEMENTS_INSIDE)


def _module_bindings(module: cst.Module) -> dict:
    """{name: how many module-level statements bind it} (defs, classes, imports, assignments).
    Asked by ``candidates`` and by ``inline`` of the same module: worked out once per module."""
    hit = _bindings_cache.get(id(module))
    if hit is not None and hit[0] is module:
        return hit[1]
    count: dict = {}
    for stmt in module.body:
        # per statement, kept for the conversion: each pass of the engine has a new module, made
        # mostly of the same statements (issue 6)
        for name in cst_walk.remembered(_statement_bindings, stmt):
            count[name] = count.get(name, 0) + 1
    _bindings_cache.clear()  # one module at a time; the entry keeps it alive, so its id stays its own
    _bindings_cache[id(module)] = (module, count)
    return count


_bindings_cache: dict = {}


def _statement_bindings(stmt: cst.CSTNode) -> set:
    """The names one module-level statement binds (callers only read it)."""
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
        return {stmt.name.value}
    bound = set(_assigned_names(stmt))
    for imp in _statement_level(stmt):
        if type(imp) is not cst.Import and type(imp) is not cst.ImportFrom:
            continue
        if isinstance(imp.names, cst.ImportStar):
            continue
        for alias in imp.names:
            if alias.asname is not None:
                bound |= names_in(alias.asname.name)
            else:
                bound.add(code(alias.name).split(".")[0])
    return bound


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
    return {n.name.value for g in _statement_level(module) if type(g) is cst.Global for n in g.names}


def _called_by_name(node: cst.CSTNode) -> set:
    """Names of the functions called as ``f(...)`` in ``node`` (what legacy._callee reads with method=False).
    Kept per node for the conversion (callers only read it): asked of every function on every pass."""
    return cst_walk.remembered(_find_called_by_name, node)


def _find_called_by_name(node: cst.CSTNode) -> set:
    return {c.func.value for c in cst_walk.walk(node) if type(c) is cst.Call and type(c.func) is cst.Name}


def candidates(module: cst.Module, names) -> dict:
    """{name: FunctionDef} of the module's functions that build operators (themselves or through each
    other) and have the shape that can be inlined: defined once, plain ``def``, straight-line body."""
    return {name: func for name, (func, why) in _building(module, names).items() if why is None}


def _building(module: cst.Module, names) -> dict:
    """{name: (FunctionDef, None or why it cannot be inlined)} of the module's functions that
    build operators, themselves or through each other."""
    with_ops = helpers_with_ops(module, names)
    if not with_ops:
        return {}  # nothing builds operators, so nothing builds them through a call either
    defs = {
        s.name.value: s for s in module.body
        if isinstance(s, cst.FunctionDef) and pipeline_decorator(s, names) is None
    }
    # a function that calls a helper builds operators too, though it spells no fn.* itself
    calls = {name: _called_by_name(func) for name, func in defs.items()}
    building = set(with_ops)
    grew = True
    while grew:
        grew = False
        for name in defs:
            if name not in building and not calls[name].isdisjoint(building):
                building.add(name)
                grew = True
    once = _module_bindings(module)
    rebound = _globals_declared(module)
    found: dict = {}
    for name in sorted(building):
        func = defs[name]
        why = None
        if once.get(name) != 1 or name in rebound:
            why = f"{name}() is bound more than once in the file"
        elif func.decorators or func.asynchronous is not None:
            why = f"{name}() is decorated or async"
        elif not isinstance(func.body, cst.IndentedBlock) or not _straight_line(legacy._body(func)):
            why = f"{name}() has loops, `with`, `try` or other blocks besides `if`: its operators are not written into the pipeline"
        found[name] = (func, why)
    return found


def _params(func: cst.FunctionDef) -> set:
    p = func.params
    return {q.name.value for q in [*p.posonly_params, *p.params, *p.kwonly_params]} | {
        q.name.value for q in (p.star_arg, p.star_kwarg) if isinstance(q, cst.Param)
    }


def _inline_into(func: cst.FunctionDef, helpers: dict, used: set):
    """``func`` with the helper calls of its body inlined; None when there are none; a str (why)
    when one cannot be."""
    if not isinstance(func.body, cst.IndentedBlock):
        return None
    body = list(func.body.body)
    if not any(not _called_by_name(stmt).isdisjoint(helpers) for stmt in body):
        return None
    params = _params(func)
    if (params | legacy._assigned(*body)) & set(helpers):
        return None  # the pipeline's own variable of that name is what it calls
    try:
        new_body = legacy._inline_helpers(body, helpers, params | set(legacy._SETTINGS), set(), used, method=False)
    except legacy._NotSimple as e:
        return str(e)
    return func.with_changes(body=func.body.with_changes(body=new_body))


class _Spelled:
    """Per top-level statement, the identifiers and the string contents it spells, read once: a
    helper's removal asks of every statement for every helper, again each time one stays."""

    def __init__(self) -> None:
        self._of: dict = {}  # id(statement) -> (statement, names, raw string values)

    def of(self, stmt: cst.CSTNode) -> tuple:
        hit = self._of.get(id(stmt))
        if hit is None or hit[0] is not stmt:
            found, strings = set(), set()
            for n in cst_walk.walk(stmt):
                tp = type(n)
                if tp is cst.Name:
                    found.add(n.value)
                elif tp is cst.SimpleString:
                    strings.add(n.raw_value)
            hit = self._of[id(stmt)] = (stmt, found, strings)
        return hit


def _references(module: cst.Module, name: str, outside: set, spelled: _Spelled) -> bool:
    """Whether the module uses ``name`` other than in the definitions named in ``outside`` (a string
    spelling it counts: ``__all__``, getattr)."""
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value in outside:
            continue
        _, found, strings = spelled.of(stmt)
        if name in found or name in strings:
            return True
    return False


def inline(module: cst.Module, names, skip: set, keep=frozenset()) -> tuple:
    """(module with helpers inlined into the module-level pipelines not in ``skip`` and the helpers
    nothing else uses removed, {pipeline name: helper names it had inlined}, {pipeline name:
    ([names of the helpers it calls], why they could not be written into it)}). Helpers named in
    ``keep`` (other files import them) stay defined."""
    building = _building(module, names)
    helpers = {name: func for name, (func, why) in building.items() if why is None}
    problems: dict = {}
    defined = _module_bindings(module)
    spelled = _Spelled()
    # read once: the removal below asks again of every statement that no inlining replaced
    used = set().union(*(spelled.of(stmt)[1] for stmt in module.body)) if helpers else set()
    inlined: dict = {}
    body = []
    for stmt in module.body:
        if (
            isinstance(stmt, cst.FunctionDef)
            and stmt.name.value not in skip
            and defined.get(stmt.name.value) == 1
            and pipeline_decorator(stmt, names) is not None
        ):
            called = sorted(name for name in _called_by_name(stmt) if name in building)
            unfit = [building[name][1] for name in called if building[name][1] is not None]
            new = _inline_into(stmt, helpers, used) if helpers and not unfit else None
            if isinstance(new, str) or (new is None and unfit):
                problems[stmt.name.value] = (called, new if isinstance(new, str) else unfit[0])
            elif new is not None:
                inlined[stmt.name.value] = legacy._reached([list(stmt.body.body)], helpers, method=False)
                stmt = new
        body.append(stmt)
    if not inlined:
        return module, {}, problems
    module = module.with_changes(body=body)
    # A helper every use of which was inlined goes: it would keep pipeline mode's imports alive.
    removable = set().union(*inlined.values()) - set(keep)
    changed = True
    while changed:
        changed = False
        for name in sorted(removable):
            if _references(module, name, removable, spelled):
                removable.discard(name)
                changed = True
    if removable:
        module = module.with_changes(
            body=[s for s in module.body if not (isinstance(s, cst.FunctionDef) and s.name.value in removable)]
        )
    return module, inlined, problems
