"""Definitions that other files of the project import stay as they were (outside_users.py finds them).

The codemod converts a pipeline's uses only in the file that defines it. A definition another
file imports (``from src.coco_pipeline import COCOPipeline``) is used there in pipeline mode, so
converting it here would break that file. Given ``{name: where it is imported}``
(``engine.convert_source(..., used_elsewhere=...)``), the engine leaves alone every pipeline
whose conversion would change such a definition, or a module-level definition it uses (``x =
make()`` where ``make`` returns a pipeline): the pipeline itself, a function that gets the pipeline
or its outputs and would be converted with it, a ``with pipe:`` graph inside an imported function,
a Pipeline subclass another one would be folded into. Helpers whose operators are written into a
converted pipeline stay defined (helper_inlining ``keep``), and so do imports other files take
from here. Each such definition gets a marker naming the importer.
"""

from __future__ import annotations

import libcst as cst

from dali_migrate import call_sites, outside_users
from dali_migrate.cst_util import code, names_in
from dali_migrate.rules import pipeline_def as pipeline_rule

RULE_ID = "imported-elsewhere"
_WHY = outside_users.WHY  # how an earlier run's markers of this kind are recognised


def pipeline_reason(name: str, via: str, where: str) -> str:
    """Why pipeline ``name`` is left as it is: ``via``, which its conversion would change, is imported."""
    if via == name:
        return (
            f"imported by {where}, {_WHY}: converted here, it would break that code. Keep it as it is, or "
            f"convert it and its uses there together by hand"
        )
    return (
        f"`{via}`, which converting it would change, is imported by {where}, {_WHY}: converted here, it "
        f"could break that code. Keep it as it is, or convert both and the uses there together by hand"
    )


def kept_reason(where: str) -> str:
    return (
        f"kept as it is: imported by {where}, {_WHY}: changing it here could break that code. Keep it while "
        f"that code is in pipeline mode, or convert it there and here together by hand"
    )


def _is_main_guard(stmt) -> bool:
    if not isinstance(stmt, cst.If) or not isinstance(stmt.test, cst.Comparison):
        return False
    test = stmt.test
    return (
        isinstance(test.left, cst.Name) and test.left.value == "__name__" and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Equal)
        and isinstance(test.comparisons[0].comparator, cst.SimpleString)
        and test.comparisons[0].comparator.evaluated_value == "__main__"
    )


def _targets(node, found: set) -> None:
    if isinstance(node, cst.Name):
        found.add(node.value)
    elif isinstance(node, (cst.Tuple, cst.List)):
        for el in node.elements:
            _targets(el.value, found)


def bindings(stmt, imports: bool = True) -> set:
    """Names a module-level statement binds: as outside_users.bindings reads them."""
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
        return {stmt.name.value}
    found: set = set()
    if isinstance(stmt, cst.SimpleStatementLine):
        for small in stmt.body:
            if isinstance(small, cst.Assign):
                for t in small.targets:
                    _targets(t.target, found)
            elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                _targets(small.target, found)
            elif imports and isinstance(small, cst.Import):
                for a in small.names:
                    found.add(a.asname.name.value if a.asname else code(a.name).split(".")[0])
            elif imports and isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                for a in small.names:
                    found.add(a.asname.name.value if a.asname else code(a.name))
        return found
    if isinstance(stmt, (cst.If, cst.Try, cst.With, cst.For, cst.While)) and not _is_main_guard(stmt):
        if isinstance(stmt, cst.For):
            _targets(stmt.target, found)
        if isinstance(stmt, cst.With):
            for item in stmt.items:
                if item.asname is not None:
                    _targets(item.asname.name, found)
        blocks = [stmt.body]
        orelse = getattr(stmt, "orelse", None)
        while orelse is not None:  # elif chains: If nodes in orelse
            blocks.append(orelse.body)
            orelse = getattr(orelse, "orelse", None) if isinstance(orelse, cst.If) else None
        blocks += [h.body for h in getattr(stmt, "handlers", ())]
        if getattr(stmt, "finalbody", None) is not None:
            blocks.append(stmt.finalbody.body)
        for block in blocks:
            for inner in getattr(block, "body", ()):
                found |= bindings(inner, imports)
    return found


def kept(module: cst.Module, used) -> dict:
    """{id(statement): (statement, imported name it serves)}: the module-level statements that bind
    an imported name, and those that bind a name they use, and so on."""
    bound: dict = {}
    for stmt in module.body:
        for name in bindings(stmt):
            bound.setdefault(name, []).append(stmt)
    out: dict = {}
    queue = [(name, name) for name in sorted(used) if name in bound]
    seen = {name for name, _ in queue}
    while queue:
        name, via = queue.pop(0)
        for stmt in bound[name]:
            if id(stmt) in out:
                continue
            out[id(stmt)] = (stmt, via)
            for read in sorted(names_in(stmt) & bound.keys()):
                if read not in seen:
                    seen.add(read)
                    queue.append((read, via))
    return out


def kept_names(module: cst.Module, used) -> frozenset:
    """Names bound by the statements :func:`kept` keeps (helpers among them stay defined)."""
    if not used:
        return frozenset()
    return frozenset(n for stmt, _ in kept(module, used).values() for n in bindings(stmt))


def hold(conv, pipelines: dict, plans: dict) -> None:
    """Take out of ``plans`` the pipelines whose conversion would change a kept statement; each is
    left with the reason (``conv.reasons``, and a marker on a ``@pipeline_def`` function)."""
    used = conv.used_elsewhere
    if not used or not plans:
        return
    statements = kept(conv.module, used)
    span = conv.parents.span
    ranges = [(span[key][0], span[key][1], via) for key, (_, via) in statements.items() if key in span]

    def via_of(node_id):
        where = span.get(node_id)
        if where is None:
            return None
        return next((via for lo, hi, via in ranges if lo <= where[0] < hi), None)

    originals = {s.name.value: s for s in conv.original.body if isinstance(s, cst.ClassDef)}
    # what the file as written keeps: a base class that converting a subclass folds away is gone
    # from conv.module
    original_via = {
        n: via for stmt, via in kept(conv.original, used).values() for n in bindings(stmt)
    } if originals else {}
    held: dict = {}
    for name, plan in plans.items():
        if plan.blockers:
            continue  # not converted anyway: its own reasons say why
        info = pipelines[name][0]
        touched = [id(info.func), *plan.rewrites, *plan.drop_kwargs, *plan.none_kwargs, *plan.shared_rewrites]
        via = next((v for v in map(via_of, touched) if v is not None), None)
        if via is None and name in originals:
            via = _kept_base(originals[name], originals, original_via)
        if via is not None:
            held[name] = via
    if not held:
        return
    reasons = {name: pipeline_reason(name, via, used[via]) for name, via in held.items()}
    for name, reason in reasons.items():
        plans[name].blockers.append((None, reason))
    call_sites._share_blockers(plans)  # pipelines converted only together with a held one stay too
    for name, reason in reasons.items():
        del plans[name]
        conv.left += 1
        conv.reasons[name] = [reason]
        conv._mark(pipelines[name][0].func, pipeline_rule.RULE.id, f"pipeline not converted: {reason}")


def _kept_base(cls: cst.ClassDef, classes: dict, original_via: dict):
    """The imported name that a kept base class of ``cls`` in this file serves: converting ``cls``
    folds its bases into it, and a base nothing else extends then goes."""
    seen: set = set()
    stack = [cls]
    while stack:
        for b in stack.pop().bases:
            base = code(b.value)
            if base in seen or base not in classes:
                continue
            seen.add(base)
            if base in original_via:
                return original_via[base]
            stack.append(classes[base])
    return None


def mark(conv) -> None:
    """A marker on each imported definition of the module (unless its pipeline marker names the
    importer already). Imports are not marked: they are kept, and need no one."""
    used = conv.used_elsewhere
    if not used:
        return
    for stmt in conv.module.body:
        for name in sorted(bindings(stmt, imports=False) & used.keys()):
            where = used[name]
            if any(where in reason for _, reason in conv.marks.get(id(stmt), [])):
                continue
            conv._mark(stmt, RULE_ID, kept_reason(where))
