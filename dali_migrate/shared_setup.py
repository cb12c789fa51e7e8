"""Reader arguments the pipeline computes itself, which the code making it computes the same way.

Distributed training scripts ask for the rank and world size twice: in the pipeline, to shard its
reader, and in the function that makes it, to split the epoch among the processes. Where the
function runs the very statements the pipeline runs (compared as code text) before it makes the
pipeline, and those statements only query the process's distributed setup, its own names hold the
values the reader was made with, so the reader's arguments can be written with them at the call
site (``reader_meta=`` of an iterator, ``pipe.epoch_size()``).

Where the caller does not ask the same way (or at all), the pipeline's own questions are asked
again at the call site, written as one expression per name (:func:`inlined`: ``shard_id=
(dist.get_rank() if dist.is_initialized() else 0)``), provided they are assignments and
``if``/``else`` blocks of those same queries: the answers are the process's, the same at both places.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from dali_migrate import cst_walk
from dali_migrate.cst_util import code, dotted, fresh_name, one_line_statement

# Calls that give the same answer each time a process asks, so the pipeline's answer and the
# caller's are equal:
DISTRIBUTED_QUERIES = frozenset({
    # torch.distributed: set once by init_process_group for the life of the process group
    "torch.distributed.is_initialized", "torch.distributed.is_available",
    "torch.distributed.get_rank", "torch.distributed.get_world_size",
    # Horovod: fixed by hvd.init() for the life of the process
    "horovod.torch.rank", "horovod.torch.size", "horovod.torch.local_rank",
    # the launcher's environment (RANK, WORLD_SIZE, LOCAL_RANK), read and not written
    "os.environ.get", "os.getenv",
    # conversions of the above: functions of their argument alone
    "int", "str", "bool",
})

# Functions of their arguments alone (os.path.join(root, split)): asked again with the same
# arguments, they give the same answer
PURE_CALLS = frozenset({"os.path.join"})

# Names a statement may read without them being imports: builtins whose calls are listed above
# and constants.
_BUILTINS = frozenset({"int", "str", "bool", "True", "False", "None"})
# Built-in exception classes an `except` of such statements may name (``except RuntimeError:``
# around ``torch.distributed.get_rank()``, DALI's SSD example)
_EXCEPTIONS = frozenset({
    "Exception", "RuntimeError", "ValueError", "KeyError", "AttributeError", "ImportError", "TypeError",
    "AssertionError", "LookupError", "OSError",
})


_BINDERS = (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr, cst.AsName, cst.Del,
            cst.CompFor)


class NotShared(Exception):
    pass


def _imports(module: cst.Module) -> dict:
    """{name bound by a module-level import: the dotted path it names} (``import torch.distributed
    as dist`` -> {"dist": "torch.distributed"}), imports inside module-level try/if included."""
    found: dict = {}
    for node in cst_walk.walk(module, not_into=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        if isinstance(node, cst.Import):
            for alias in node.names:
                path = code(alias.name)
                if alias.asname is not None:
                    found[code(alias.asname.name)] = path
                else:
                    found[path.split(".")[0]] = path.split(".")[0]
        elif isinstance(node, cst.ImportFrom) and not node.relative and node.module is not None \
                and not isinstance(node.names, cst.ImportStar):
            base = code(node.module)
            for alias in node.names:
                bound = alias.asname.name if alias.asname is not None else alias.name
                found[code(bound)] = f"{base}.{code(alias.name)}"
    return found


def _resolved(func: cst.BaseExpression, imports: dict) -> Optional[str]:
    path = dotted(func)
    if path is None:
        return None
    head, _, rest = path.partition(".")
    if head in _BUILTINS:
        return path
    if head not in imports:
        return None
    return imports[head] + ("." + rest if rest else "")


def _text(stmt) -> str:
    return code(stmt.with_changes(leading_lines=[])).strip()


def _bound(stmt) -> set:
    from dali_migrate.pipeline_analysis import _assigned_names

    return _assigned_names(stmt)


def _binders_in(func: cst.FunctionDef) -> list:
    """(statement or parameter node, names it binds) for every binding in ``func``, nested scopes
    and global/nonlocal declarations included."""
    out = []
    params = func.params
    for q in [*params.posonly_params, *params.params, *params.kwonly_params,
              *[p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]]:
        out.append((q, {q.name.value}))
    for node in cst_walk.walk(func.body):
        if isinstance(node, (cst.Global, cst.Nonlocal)):
            out.append((node, {n.name.value for n in node.names}))
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            out.append((node, {node.name.value}))
        elif isinstance(node, cst.ImportAlias):
            out.append((node, {code(node.asname.name if node.asname else node.name).split(".")[0]}))
        elif isinstance(node, _BINDERS):
            target = node.name if isinstance(node, cst.AsName) else node.target
            if not isinstance(target, (cst.Attribute, cst.Subscript)):
                out.append((node, cst_walk.variables(target)))
    return out


def _inside(node, stmts: list, parents) -> bool:
    while node is not None:
        if any(node is s for s in stmts):
            return True
        node = parents.of(node)
    return False


def _slice(stmts: list, names: set) -> list:
    """The statements of ``stmts`` that compute ``names``, and those that compute what they read,
    in order."""
    needed, chosen = set(names), []
    for stmt in reversed(stmts):
        bound = _bound(stmt)
        if bound & needed:
            chosen.append(stmt)
            needed |= cst_walk.variables(stmt) - bound
    chosen.reverse()
    return chosen


def _chosen(info, names: set, reader_index) -> list:
    """The pipeline's statements before the reader that compute ``names`` (:func:`_slice`)."""
    if reader_index is None:
        reader_index = info.reader_index
    chosen = _slice(info.statements[:reader_index] if reader_index is not None else [], names)
    if not chosen:
        raise NotShared("which the code making the pipeline cannot compute")
    return chosen


def _queries_only(info, chosen: list, parents, params_ok: bool = False) -> tuple:
    """(the module's imports, the import names the statements read), where ``chosen`` only query
    the process's distributed setup through module-level imports; raises NotShared otherwise."""
    if parents.scope(info.func) is not None:
        # its statements could read names of the functions around it, which the caller need not see
        raise NotShared("and the pipeline function is not defined at module level")
    imports, read = _asking(chosen, info.func, parents, params_ok)
    for stmt in info.statements:
        if _bound(stmt) & read:
            raise NotShared(f"and the pipeline binds `{sorted(_bound(stmt) & read)[0]}`, which they read, itself")
    return imports, read


def _asking(chosen: list, func: cst.FunctionDef, parents, params_ok: bool = False) -> tuple:
    """(the module's imports, the import names ``chosen`` read), where the statements ``chosen`` of
    ``func`` only make DISTRIBUTED_QUERIES (and PURE_CALLS) through module-level imports, reading
    none of ``func``'s parameters (``params_ok``: parameters too, which the caller then replaces
    with what the call passes); raises NotShared otherwise."""
    params = func.params
    own_params = {q.name.value for q in [*params.posonly_params, *params.params, *params.kwonly_params]}
    # each use of the pipeline in the file asks again, of the same module and the same caller
    # (issue 6): what is read from them is kept for the conversion
    imports = cst_walk.remembered(_imports, parents.order[0])
    own = set().union(*(_bound(s) for s in chosen))
    for stmt in chosen:
        for node in cst_walk.walk(stmt):
            if isinstance(node, cst.Call):
                path = _resolved(node.func, imports)
                if path not in DISTRIBUTED_QUERIES and path not in PURE_CALLS:
                    raise NotShared(f"by `{one_line_statement(stmt)}`, whose call {code(node.func)}() is not known "
                                    "to give the caller the same value")
        outside = cst_walk.variables(stmt) - own - _BUILTINS - _EXCEPTIONS - (own_params if params_ok else set())
        if outside & own_params:
            raise NotShared(f"from its parameter `{sorted(outside & own_params)[0]}`")
        if outside - set(imports):
            raise NotShared(f"from `{sorted(outside - set(imports))[0]}`, which is not a module-level import")
    return imports, set().union(*(cst_walk.variables(s) for s in chosen)) & set(imports)


def _unshadowed(read: set, func, parents) -> None:
    """Raises NotShared where ``func`` or a function around it binds one of the imports ``read``."""
    outer = func
    while outer is not None:
        if isinstance(outer, cst.FunctionDef):
            for _, bound in cst_walk.remembered(_binders_in, outer):
                if bound & read:
                    raise NotShared(f"and {outer.name.value}() binds `{sorted(bound & read)[0]}`, which they read")
        outer = parents.scope(outer)


def check(info, construction: cst.Call, parents, names: set, reader_index=None) -> None:
    """Returns when the code that makes the pipeline with ``construction`` holds ``names`` (names
    the pipeline ``info`` computes before its reader, the one of statement ``reader_index`` where it
    has several) with the values the pipeline gives them; raises NotShared saying why not."""
    chosen = _chosen(info, names, reader_index)
    imports, read = _queries_only(info, chosen, parents)
    own = set().union(*(_bound(s) for s in chosen))

    # The caller: the same statements, in order, among its own before the call that makes the pipeline.
    func = parents.scope(construction)
    if not isinstance(func, cst.FunctionDef):
        raise NotShared("and the pipeline is not made in a function that computes them too")
    body = list(func.body.body)
    holder = construction
    while holder is not None and not any(holder is s for s in body):
        holder = parents.of(holder)
    if holder is None:
        raise NotShared("and the pipeline is not made in a function that computes them too")
    before = body[:next(i for i, s in enumerate(body) if s is holder)]
    texts = [cst_walk.remembered(_text, s) for s in before]
    matched, at = [], 0
    for stmt in chosen:
        want = _text(stmt)
        try:
            at = texts.index(want, at)
        except ValueError:
            raise NotShared(f"by `{one_line_statement(stmt)}`, which {func.name.value}() does not run word for word "
                            "before making the pipeline") from None
        matched.append(before[at])
        at += 1
    # Nothing else binds them: not between the statements, nor before the caller reads them, nor
    # in enclosing functions whose names the statements would read.
    for node, bound in cst_walk.remembered(_binders_in, func):
        clash = bound & own
        if clash and not _inside(node, matched, parents):
            raise NotShared(f"and {func.name.value}() binds `{sorted(clash)[0]}` elsewhere too")
    _unshadowed(read, func, parents)


def inlined(info, use, parents, names: set, reader_index=None, params_ok: bool = False) -> dict:
    """{name: an expression giving the value the pipeline ``info`` computes for it}, for ``names``
    its reader reads, where the pipeline computes them with assignments and ``if``/``else`` blocks
    that only query the process's distributed setup (``if torch.distributed.is_initialized(): rank
    = torch.distributed.get_rank() else: rank = 0``), and the code at ``use`` sees the same imports:
    the query asked again there gives the same answer (:data:`DISTRIBUTED_QUERIES`). For a caller
    that does not ask itself (:func:`check`). Raises NotShared saying why not."""
    chosen = _chosen(info, names, reader_index)
    _, read = _queries_only(info, chosen, parents, params_ok)
    _unshadowed(read, parents.scope(use), parents)
    env = _evaluate(chosen, {})
    missing = sorted(set(names) - set(env))
    if missing:
        raise NotShared(f"and `{missing[0]}` is not bound on every path")
    return {name: _parenthesized(env[name]) for name in names}  # (read inside larger expressions too)


class _Values(cst.CSTTransformer):
    def __init__(self, env: dict):
        self.env = env

    def leave_Name(self, original, updated):
        value = self.env.get(original.value)
        return _parenthesized(value) if value is not None else updated


def _parenthesized(expr):
    if isinstance(expr, (cst.Name, cst.Integer, cst.SimpleString, cst.Call, cst.Attribute)) or expr.lpar:
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _evaluate(stmts: list, env: dict) -> dict:
    """The names ``stmts`` bind, as expressions of what they read (``env``: the names bound so far)."""
    env = dict(env)
    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if not (isinstance(small, cst.Assign) and all(isinstance(t.target, cst.Name) for t in small.targets)):
                    raise NotShared(f"by `{one_line_statement(stmt)}`, which is not an assignment to names")
                value = small.value.visit(_Values(env))
                for t in small.targets:
                    env[t.target.value] = value
        elif isinstance(stmt, cst.If) and isinstance(stmt.body, cst.IndentedBlock):
            test = stmt.test.visit(_Values(env))
            taken = _evaluate(list(stmt.body.body), env)
            orelse = stmt.orelse
            if orelse is None:
                other = env
            elif isinstance(orelse, cst.Else) and isinstance(orelse.body, cst.IndentedBlock):
                other = _evaluate(list(orelse.body.body), env)
            else:  # elif: an If of its own in the else
                other = _evaluate([orelse], env)
            for name in set(taken) | set(other):
                a, b = taken.get(name), other.get(name)
                if a is None or b is None:
                    env.pop(name, None)  # bound on one path only
                elif a is b:
                    env[name] = a
                else:
                    env[name] = cst.IfExp(test=_parenthesized(test), body=_parenthesized(a), orelse=_parenthesized(b))
        else:
            raise NotShared(f"by `{one_line_statement(stmt)}`, which is neither an assignment nor an if/else")
    return env


def asked_in(func: cst.FunctionDef, name: str, parents):
    """``name``, a variable ``func`` computes itself (a function that makes a pipeline: deepglint's
    ``rank = int(os.getenv("RANK"))``), as one expression of the same distributed queries, or None:
    its statements must be top-level assignments and if/else blocks of DISTRIBUTED_QUERIES through
    module-level imports, reading none of ``func``'s parameters, and nothing else in ``func`` may
    bind the names they bind."""
    chosen = _slice(list(func.body.body) if isinstance(func.body, cst.IndentedBlock) else [], {name})
    if not chosen:
        return None
    try:
        _, read = _asking(chosen, func, parents)
    except NotShared:
        return None
    own = set().union(*(_bound(s) for s in chosen))
    # bound nowhere else in the function (its nested functions included), nor shadowing an import it reads
    for node, bound in cst_walk.remembered(_binders_in, func):
        if (bound & own and not _inside(node, chosen, parents)) or bound & read:
            return None
    try:
        env = _evaluate(chosen, {})
    except NotShared:
        return None
    return _parenthesized(env[name]) if name in env else None


def asked_again(info, use, parents, names: set, taken: set, reader_index=None) -> tuple:
    """(statements, {name: the name they bind it to}) that ask again, where the code at ``use``
    (the call that makes the pipeline ``info``) runs them right before its statement, the
    questions the pipeline asks for ``names``: for a pipeline that asks inside ``try``/``except``
    (``try: shard_id = torch.distributed.get_rank() ... except RuntimeError: shard_id = 0``), which
    no expression can ask again. The statements are the pipeline's, with the names they bind
    renamed to names of their own (``taken``: the names the file spells, which grows); they may
    be assignments, ``if``/``else`` and ``try``/``except <built-in exception>`` blocks of the
    same queries as :func:`inlined`'s, read none of the pipeline's parameters, and must bind
    ``names`` on every path. Raises NotShared saying why not."""
    chosen = _chosen(info, names, reader_index)
    _, read = _queries_only(info, chosen, parents)
    _unshadowed(read, parents.scope(use), parents)
    always = _always_bound(chosen)
    missing = sorted(set(names) - always)
    if missing:
        raise NotShared(f"and `{missing[0]}` is not bound on every path")
    own = set().union(*(_bound(s) for s in chosen))
    table = {name: fresh_name(name, taken) for name in sorted(own)}
    block = [s.visit(_Renamed(table)) for s in chosen]
    said = cst.EmptyLine(comment=cst.Comment(
        f"# asked again as {info.func.name.value}() asks it, for its reader's metadata below"))
    block[0] = block[0].with_changes(leading_lines=[said])
    return block, {name: cst.Name(table[name]) for name in names}


class _Renamed(cst.CSTTransformer):
    """Variables renamed (not attributes' or keywords' names)."""

    def __init__(self, table: dict):
        self.table = table

    def leave_Name(self, original, updated):
        new = self.table.get(original.value)
        return updated.with_changes(value=new) if new is not None else updated

    def leave_Attribute(self, original, updated):
        return updated.with_changes(attr=original.attr)

    def leave_Arg(self, original, updated):
        return updated.with_changes(keyword=original.keyword)


def _always_bound(stmts: list) -> set:
    """The names ``stmts`` bind on every path that gets past them (an exception an ``except``
    catches included); NotShared for statements other than assignments, if/else and try/except
    blocks of them (no ``else``/``finally``, no ``except ... as``, handlers naming built-in
    exceptions or none)."""
    bound: set = set()
    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if not (isinstance(small, cst.Assign) and all(isinstance(t.target, cst.Name) for t in small.targets)):
                    raise NotShared(f"by `{one_line_statement(stmt)}`, which is not an assignment to names")
                bound |= {t.target.value for t in small.targets}
        elif isinstance(stmt, cst.If) and isinstance(stmt.body, cst.IndentedBlock):
            taken = _always_bound(list(stmt.body.body))
            orelse = stmt.orelse
            if orelse is None:
                other = set()
            elif isinstance(orelse, cst.Else) and isinstance(orelse.body, cst.IndentedBlock):
                other = _always_bound(list(orelse.body.body))
            else:
                other = _always_bound([orelse])
            bound |= taken & other
        elif isinstance(stmt, cst.Try) and isinstance(stmt.body, cst.IndentedBlock):
            if stmt.orelse is not None or stmt.finalbody is not None or not stmt.handlers:
                raise NotShared(f"by `{one_line_statement(stmt)}`, a try with else/finally or without except")
            both = _always_bound(list(stmt.body.body))
            for handler in stmt.handlers:
                kinds = handler.type
                named = [] if kinds is None else (
                    [e.value for e in kinds.elements] if isinstance(kinds, cst.Tuple) else [kinds])
                if handler.name is not None or not all(isinstance(k, cst.Name) and k.value in _EXCEPTIONS for k in named):
                    raise NotShared(f"by `{one_line_statement(stmt)}`, whose except names other than built-in exceptions")
                both &= _always_bound(list(handler.body.body))
            bound |= both
        else:
            raise NotShared(f"by `{one_line_statement(stmt)}`, which is neither an assignment, an if/else nor a try/except")
    return bound


def asked_reads(info, names: set) -> set:
    """The names outside them that the statements :func:`asked_again` writes for ``names`` read
    (the modules they ask through: ``torch``)."""
    chosen = _chosen(info, names, None)
    own = set().union(*(_bound(s) for s in chosen))
    return set().union(*(cst_walk.variables(s) for s in chosen)) - own - _BUILTINS - _EXCEPTIONS
