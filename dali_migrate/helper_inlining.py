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
from dali_migrate.pipeline_analysis import _assigned_names, _builds_ops, helpers_with_ops, outside_pipelines, pipeline_decorator

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


def _called_outside_pipelines(func: cst.FunctionDef, names) -> set:
    """_called_by_name(func), less the calls made only by pipeline functions nested in it."""
    return {c.func.value for c in outside_pipelines(func, names) if type(c) is cst.Call and type(c.func) is cst.Name}


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
    defs = {
        s.name.value: s for s in module.body
        if isinstance(s, cst.FunctionDef) and pipeline_decorator(s, names) is None
    }
    arithmetic = {name for name, func in defs.items() if cst_walk.remembered(_arithmetic_only, func)}
    if not with_ops and not arithmetic:
        return {}  # nothing builds operators, so nothing builds them through a call either
    # a function that calls a helper builds operators too, though it spells no fn.* itself (not
    # through a pipeline defined inside it: that pipeline's calls are its own)
    calls = {name: _called_outside_pipelines(func, names) for name, func in defs.items()} if with_ops else {}
    building = _grown(set(with_ops), defs, calls)
    once = _module_bindings(module)
    rebound = _globals_declared(module)
    # Functions of operators only are written in where they can be, and are left to be called
    # (once, before the loop, as the pipeline called them) where they cannot: they are no reason
    # to refuse a pipeline, nor do their callers build operators through them.
    building |= {name for name in arithmetic if once.get(name) == 1 and name not in rebound}
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


def _grown(building: set, defs: dict, calls: dict) -> set:
    """``building`` with every function of ``defs`` that calls one of them ({name: names it calls}
    in ``calls``), through each other too: such a function builds operators, though it spells none."""
    grew = bool(building)
    while grew:
        grew = False
        for name in defs:
            if name not in building and not calls[name].isdisjoint(building):
                building.add(name)
                grew = True
    return building


_ARITHMETIC = (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison)
_NOT_ARITHMETIC = (cst.Call, cst.Attribute, cst.Lambda, cst.BooleanOperation, cst.IfExp, cst.Await, cst.Yield,
                   cst.NamedExpr, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.FunctionDef,
                   cst.ClassDef, cst.If, cst.Global, cst.Nonlocal, cst.Del, cst.Import, cst.ImportFrom)


def _arithmetic_only(func: cst.FunctionDef) -> bool:
    """``func`` only combines its parameters with operators (``condition * a + (condition ^ True) * b``):
    on DALI data each operator is one, so the function builds them, and with no call, attribute or
    name from outside it computes the same from the same arguments wherever it runs, once when a
    pipeline was built or each iteration in the pipeline's loop."""
    if func.decorators or func.asynchronous is not None or not isinstance(func.body, cst.IndentedBlock):
        return False
    p = func.params
    if p.star_arg not in (cst.MaybeSentinel.DEFAULT, None) or p.star_kwarg is not None:
        return False
    body = legacy._body(func)
    if not body or not all(isinstance(s, cst.SimpleStatementLine) for s in body):
        return False
    nodes = [n for s in body for n in cst_walk.walk(s)]
    if any(isinstance(n, _NOT_ARITHMETIC) for n in nodes) or not any(isinstance(n, _ARITHMETIC) for n in nodes):
        return False
    free = legacy.read_names(*body) - _params(func) - legacy._assigned(*body)
    return free <= {"True", "False", "None"}


def _params(func: cst.FunctionDef) -> set:
    p = func.params
    return {q.name.value for q in [*p.posonly_params, *p.params, *p.kwonly_params]} | {
        q.name.value for q in (p.star_arg, p.star_kwarg) if isinstance(q, cst.Param)
    }


def _inline_into(func: cst.FunctionDef, helpers: dict, used: set, renamed: Optional[dict] = None):
    """``func`` with the helper calls of its body inlined; None when there are none; a str (why)
    when one cannot be. ``renamed`` gets {new name: helper's own name} of the variables renamed."""
    if not isinstance(func.body, cst.IndentedBlock):
        return None
    body = list(func.body.body)
    if not any(not _called_by_name(stmt).isdisjoint(helpers) for stmt in body):
        return None
    params = _params(func)
    if (params | legacy._assigned(*body)) & set(helpers):
        return None  # the pipeline's own variable of that name is what it calls
    token = legacy.RENAMED.set(renamed)
    try:
        new_body = legacy._inline_helpers(body, helpers, params | set(legacy._SETTINGS), set(), used, method=False)
    except legacy._NotSimple as e:
        return str(e)
    finally:
        legacy.RENAMED.reset(token)
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


def inline(module: cst.Module, names, skip: set, keep=frozenset(), renamed: Optional[dict] = None) -> tuple:
    """(module with helpers inlined into the module-level pipelines not in ``skip`` and the helpers
    nothing else uses removed, {pipeline name: helper names it had inlined}, {pipeline name:
    ([names of the helpers it calls], why they could not be written into it)}). Helpers named in
    ``keep`` (other files import them) stay defined. ``renamed`` gets {pipeline name: {new name:
    the helper's own name}} of the helpers' variables renamed where written in."""
    building = _building(module, names)
    helpers = {name: func for name, (func, why) in building.items() if why is None}
    problems: dict = {}
    defined = _module_bindings(module)
    spelled = _Spelled()
    # read once: the removal below asks again of every statement that no inlining replaced
    used = set().union(*(spelled.of(stmt)[1] for stmt in module.body)) if helpers else set()
    inlined: dict = {}
    body = []
    nested_names = _nested_pipeline_names(module, names)
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef) and pipeline_decorator(stmt, names) is None and nested_names:
            stmt = _inline_nested(stmt, names, helpers, building, skip, nested_names, used, inlined, problems)
            body.append(stmt)
            continue
        if (
            isinstance(stmt, cst.FunctionDef)
            and stmt.name.value not in skip
            and defined.get(stmt.name.value) == 1
            and pipeline_decorator(stmt, names) is not None
        ):
            called = sorted(name for name in _called_by_name(stmt) if name in building)
            unfit = [building[name][1] for name in called if building[name][1] is not None]
            own_renames: dict = {}
            new = _inline_into(stmt, helpers, used, own_renames) if helpers and not unfit else None
            if renamed is not None and own_renames:
                renamed[stmt.name.value] = own_renames
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
    # (A function's own helpers, which _inline_nested inlined, are no module-level definitions.)
    removable = {n for n in set().union(*inlined.values()) if n in helpers} - set(keep)
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


# -- pipelines defined inside a function -------------------------------------------------------
#
# `with pipe:` blocks inside a function (synthesized pipelines) and @pipeline_def functions nested in
# one call helpers too: functions the enclosing function defines itself (closures), or the module's.
# Written into such a pipeline, a closure's statements read the enclosing function's names as the
# closure did (the pipeline is nested in the same function); the engine's check that the graph
# reads nothing the function changes after it then covers them too. A module-level helper reads
# globals, which the enclosing function may shadow: it is written in only where it reads none of
# the enclosing function's names.


def _nested_pipeline_names(module: cst.Module, names) -> set:
    """Names of the pipelines defined directly in the body of a module-level function, each defined
    once in the file (the engine tells pipelines apart by name)."""
    seen: dict = {}
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef) and isinstance(stmt.body, cst.IndentedBlock):
            for inner in stmt.body.body:
                if isinstance(inner, cst.FunctionDef) and pipeline_decorator(inner, names) is not None:
                    seen[inner.name.value] = seen.get(inner.name.value, 0) + 1
    defined = _module_bindings(module)
    return {name for name, k in seen.items() if k == 1 and name not in defined}


def _function_bindings(func: cst.FunctionDef) -> set:
    """Every name ``func`` binds in its own scope: parameters and what its statements bind."""
    return _params(func) | set().union(set(), *(legacy._bindings(s) for s in func.body.body))


def _local_helpers(func: cst.FunctionDef, names) -> dict:
    """{name: FunctionDef} of the functions defined directly in ``func``'s body that build operators
    and can be written into a pipeline: bound once in ``func``, plain ``def``, straight-line."""
    body = list(func.body.body)
    counts: dict = {}
    for s in body:
        for n in legacy._bindings(s):
            counts[n] = counts.get(n, 0) + 1
    declared = {n.name.value for s in body for g in _statement_level(s) if type(g) in (cst.Global, cst.Nonlocal) for n in g.names}
    local = {
        s.name.value: s for s in body
        if isinstance(s, cst.FunctionDef) and pipeline_decorator(s, names) is None
        and counts.get(s.name.value) == 1 and s.name.value not in declared and s.name.value not in _params(func)
    }
    building = _grown({n for n, f in local.items() if _builds_ops(f, names)}, local, {n: _called_by_name(f) for n, f in local.items()})
    building |= {n for n, f in local.items() if _arithmetic_only(f)}  # (as in _building)
    return {
        n: local[n] for n in building
        if not local[n].decorators and local[n].asynchronous is None
        and isinstance(local[n].body, cst.IndentedBlock) and _straight_line(legacy._body(local[n]))
    }


def _inline_nested(func: cst.FunctionDef, names, module_helpers: dict, building: dict, skip: set,
                   nested_names: set, used: set, inlined: dict, problems: dict) -> cst.FunctionDef:
    """``func`` with helper calls inlined into the pipelines defined directly in its body (records
    each in ``inlined``), and its own helpers that nothing in it uses any more removed. Why a
    module-level helper could not be written into one goes to ``problems``, keyed ("nested", name)."""
    if not isinstance(func.body, cst.IndentedBlock):
        return func
    body = list(func.body.body)
    targets = [
        i for i, s in enumerate(body)
        if isinstance(s, cst.FunctionDef) and s.name.value in nested_names and s.name.value not in skip
    ]
    if not targets:
        return func
    local = _local_helpers(func, names)
    enclosing = _function_bindings(func)
    usable = dict(local)
    shadowed: dict = {}  # module-level helper -> a name it reads that the function binds too
    for name, helper in module_helpers.items():
        if name in enclosing:
            continue  # the function's own name for something else
        reached = legacy._reached([[helper]], module_helpers, method=False) | {name}
        clash = sorted(set().union(*(legacy.read_names(module_helpers[n]) for n in reached if n in module_helpers)) & enclosing)
        if clash:
            shadowed[name] = clash[0]
        elif all(building[n][1] is None for n in reached if n in module_helpers):
            usable[name] = helper
    for i in targets:
        called = sorted(n for n in _called_by_name(body[i]) if n in shadowed)
        if called:
            problems[("nested", body[i].name.value)] = (called, (
                f"{called[0]}() reads `{shadowed[called[0]]}` from the module, a name {func.name.value}() binds too: "
                f"written into the pipeline, it would read {func.name.value}()'s; convert by hand"
            ))
    if not usable:
        return func
    done: dict = {}
    for i in targets:
        pipe = body[i]
        called = sorted(n for n in _called_by_name(pipe) if n in usable or n in local or n in building)
        if not called or any(n not in usable for n in called):
            continue  # a helper it calls cannot be written into it: the pipeline is refused as before
        new = _inline_into(pipe, usable, used)
        if new is None or isinstance(new, str):
            continue
        body[i] = new
        done[pipe.name.value] = legacy._reached([list(pipe.body.body)], usable, method=False)
    if not done:
        return func
    inlined.update(done)
    # the function's own helpers that only the inlined pipelines called go, as module-level ones do
    gone = set().union(*done.values()) & set(local)
    changed = True
    while changed:
        changed = False
        for name in sorted(gone):
            if any(name in names_in(s) for s in body if not (isinstance(s, cst.FunctionDef) and s.name.value in gone)):
                gone.discard(name)
                changed = True
    kept = [s for s in body if not (isinstance(s, cst.FunctionDef) and s.name.value in gone)]
    if kept and kept[0] is not body[0]:
        # what now opens the body loses the blank lines that set it apart from the removed def
        lines = list(kept[0].leading_lines)
        while lines and lines[0].comment is None:
            lines.pop(0)
        kept[0] = kept[0].with_changes(leading_lines=lines)
    return func.with_changes(body=func.body.with_changes(body=kept))
