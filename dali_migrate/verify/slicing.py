"""Keep only what a named pipeline needs from a module, so verifying a script never runs its
top-level code (building pipelines on the author's paths, training loops without a main guard).

Statements the pipeline does not need are replaced by blank lines, so line numbers (in errors,
and in the call sites that seeds are matched by) stay those of the file.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from dali_migrate.cst_util import names_in
from dali_migrate.pipeline_analysis import _assigned_names


class SliceError(Exception):
    pass


def _bound_by(stmt: cst.CSTNode) -> set:
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
        return {stmt.name.value}
    if isinstance(stmt, cst.SimpleStatementLine):
        bound = set()
        for small in stmt.body:
            if isinstance(small, cst.Import):
                for a in small.names:
                    bound.add(a.asname.name.value if a.asname else cst.Module([]).code_for_node(a.name).split(".")[0])
            elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                for a in small.names:
                    bound.add(a.asname.name.value if a.asname else cst.Module([]).code_for_node(a.name))
            else:
                bound |= _assigned_names(small)
        return bound
    if isinstance(stmt, (cst.If, cst.Try, cst.With)):
        # e.g. try: import x / except ImportError: x = None; or `if dali_available:` above the
        # pipeline's definition
        return _assigned_names(stmt) | _defined_in(stmt) | {
            n for s in _import_nodes(stmt) for n in _bound_by(cst.SimpleStatementLine([s]))
        }
    return set()


def _defined_in(stmt) -> set:
    """Names of the functions and classes defined in the blocks of a top-level if/try/with."""
    found: set = set()
    stack = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            found.add(node.name.value)
        elif isinstance(node, (cst.If, cst.Else, cst.Try, cst.ExceptHandler, cst.Finally, cst.With, cst.IndentedBlock)):
            stack.extend(node.children)
    return found


def _import_nodes(stmt):
    found = []

    class _V(cst.CSTVisitor):
        def visit_Import(self, node):
            found.append(node)

        def visit_ImportFrom(self, node):
            found.append(node)

    stmt.visit(_V())
    return found


def _free_names(stmt) -> set:
    """Names a statement reads from the module (a function's own locals and parameters excluded)."""
    if isinstance(stmt, cst.FunctionDef):
        p = stmt.params
        params = {x.name.value for x in [*p.posonly_params, *p.params, *p.kwonly_params]}
        params |= {x.name.value for x in (p.star_arg, p.star_kwarg) if isinstance(x, cst.Param)}
        local = _assigned_names(stmt.body) | params
        outer = set()
        for dec in stmt.decorators:
            outer |= names_in(dec)
        for x in [*p.posonly_params, *p.params, *p.kwonly_params, p.star_arg, p.star_kwarg]:
            if not isinstance(x, cst.Param):
                continue
            if x.default is not None:
                outer |= names_in(x.default)
            if x.annotation is not None:  # evaluated when the def runs (`data: List[str]`)
                outer |= names_in(x.annotation)
        if stmt.returns is not None:
            outer |= names_in(stmt.returns)
        return outer | (names_in(stmt.body) - local)
    if isinstance(stmt, cst.ClassDef):
        outer = set()
        for part in [*stmt.bases, *stmt.keywords, *stmt.decorators]:
            outer |= names_in(part)
        body = stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else []
        for inner in body:
            outer |= _free_names(inner)
        return outer
    return names_in(stmt)


def _changes(stmt) -> set:
    """Names whose objects a statement that binds nothing changes through a method call:
    ``parser.add_argument(...)`` above a module-level ``args = parser.parse_args()`` the pipeline
    reads, ``cfg.update(...)`` (kept with what binds them; a module's function is not counted)."""
    found = set()
    if isinstance(stmt, cst.SimpleStatementLine):
        for small in stmt.body:
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                func = small.value.func
                while isinstance(func, cst.Attribute):
                    func = func.value
                if isinstance(func, cst.Name) and func is not small.value.func:
                    found.add(func.value)
    return found


def _is_future(stmt) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and isinstance(stmt.body[0], cst.ImportFrom)
        and isinstance(stmt.body[0].module, cst.Name)
        and stmt.body[0].module.value == "__future__"
    )


def _is_main_guard(stmt) -> bool:
    return isinstance(stmt, cst.If) and "__main__" in cst.Module([]).code_for_node(stmt.test)


def slice_source(source: str, names: list) -> str:
    """``source`` with every top-level statement not needed by ``names`` blanked out."""
    wrapper = MetadataWrapper(cst.parse_module(source))
    module = wrapper.module
    positions = wrapper.resolve(PositionProvider)
    body = list(module.body)
    bound = [_bound_by(s) for s in body]
    defined = set().union(*bound) if bound else set()
    missing = [n for n in names if n not in defined]
    if missing:
        raise SliceError(f"no top-level definition of {', '.join(missing)}")
    # (a module's function called at the top level, `os.makedirs(...)`, is top-level code: not run)
    imported = {n for s in body for imp in _import_nodes(s) for n in _bound_by(cst.SimpleStatementLine([imp]))}
    needed = set(names)
    keep = set()
    changed = True
    while changed:
        changed = False
        for i, stmt in enumerate(body):
            if i in keep or _is_main_guard(stmt):
                continue
            if _is_future(stmt) or bound[i] & needed or _changes(stmt) & (needed - imported):
                keep.add(i)
                needed |= _free_names(stmt) - bound[i]
                changed = True
    lines = source.splitlines(keepends=True)
    out = list(lines)
    for i, stmt in enumerate(body):
        if i in keep:
            continue
        rng = positions[stmt]
        # leading comments belong to the statement in libcst; blank the statement's own lines only
        # (a function's or class's range starts at `def`, its decorators stand above it)
        first = positions[stmt.decorators[0]].start.line if getattr(stmt, "decorators", None) else rng.start.line
        for ln in range(first - 1, rng.end.line):
            if ln < len(out):
                out[ln] = "\n" if out[ln].endswith("\n") else ""
    return "".join(out)
