"""A local variable that chooses which pipeline a function makes, as training scripts choose
between a training and a validation pipeline (NVIDIA DeepLearningExamples' Paddle ResNet-50):

    pipe_class = None
    if mode == Mode.TRAIN:
        pipe_class = HybridTrainPipe
    else:
        pipe_class = HybridValPipe
    pipe = pipe_class(file_root, batch_size, device_id, ops_meta, num_threads=num_threads, seed=seed)
    pipe.build()
    return DALIGenericIterator([pipe], ["data", "label"], reader_name="Reader")

The variable and its call stay as written: a converted pipeline is a module-level function of the
pipeline's own name with the pipeline's own signature (a Pipeline subclass's constructor
signature, a ``@pipeline_def`` function's parameters plus its settings), so ``pipe_class(...)``
makes the converted generator of whichever pipeline the variable holds, the arguments bound as
they were. call_sites.plan follows the variable (a :class:`ChoiceAlias`) as it follows a
pipeline's name: the code after the call is planned once per pipeline the variable may hold,
and as it is written once, every rewrite there must come out the same for each of them, with the
same arguments dropped from the call (:func:`check_choice_aliases`); they convert together or not
at all.

That is exact only where, at the call, the variable can hold nothing but those pipelines
(:func:`choice_alias`): a variable of one function (not a parameter, not declared global or
nonlocal, not read by a nested function), every assignment of which is ``var = P`` (or
``var = P if cond else Q``) with P a module-level name, or one ``var = None`` that an
``if``/``else`` of the same block assigns again on every branch before the call; read only as the
callee of the calls; assigned nowhere after them.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import libcst as cst

from dali_migrate import call_sites
from dali_migrate.cst_util import code, one_line_statement


@dataclasses.dataclass(frozen=True)
class ChoiceAlias:
    """A variable of a function that holds one of several pipelines, chosen before it makes one."""

    key: tuple  # (id(the function), the variable)
    name: str  # the variable (``pipe_class``)
    choices: tuple  # the pipeline names assigned to it, in the order the code assigns them
    func: cst.FunctionDef = dataclasses.field(compare=False)
    refs: tuple = dataclasses.field(compare=False, default=())  # the callees of its calls
    #: (pipeline name, the statement that assigns it to the variable)
    bound_at: tuple = dataclasses.field(compare=False, default=())

    @property
    def label(self) -> str:
        return f"`{self.name}` ({' or '.join(self.choices)}, chosen in {self.func.name.value}())"


_BY_HAND = "call the pipeline in each branch instead (`pipe = {first}(...)`), or convert by hand"


def _choices(value) -> Optional[list]:
    """The names ``value`` picks from (``P``, ``P if cond else Q``, nested), or None."""
    if isinstance(value, cst.Name):
        return [value]
    if isinstance(value, cst.IfExp):
        body, orelse = _choices(value.body), _choices(value.orelse)
        return None if body is None or orelse is None else body + orelse
    return None


def choice_alias(ref: cst.Name, parents):
    """``ref`` (a pipeline's name) assigned to a variable of a function that is then called to
    make a pipeline: the variable (a ChoiceAlias); (statement, reason) when the variable is used
    in a way that does not say which pipeline a call makes; None when ``ref`` is not the value
    (or a choice of the value) of an assignment to one name of a function that calls it (the
    caller's generic reason then quotes the statement)."""
    value, up = ref, parents.of(ref)
    while isinstance(up, cst.IfExp) and value is not up.test:
        value, up = up, parents.of(up)
    if not (isinstance(up, cst.Assign) and up.value is value and len(up.targets) == 1
            and isinstance(up.targets[0].target, cst.Name)):
        return None
    assign, var, name = up, up.targets[0].target.value, ref.value
    stmt = parents.statement(assign)
    by_hand = _BY_HAND.format(first=name)
    func = parents.scope(assign)
    if not isinstance(func, cst.FunctionDef):
        return None  # a module's variable: other modules and functions may read or assign it
    own = call_sites._scope_nodes(func, parents)
    if not any(isinstance(n, cst.Name) and n.value == var and isinstance(parents.of(n), cst.Call)
               and parents.of(n).func is n for n in own.nodes):
        return None  # not a choice of the pipeline to make
    params = func.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    every += [q for q in (params.star_arg, params.star_kwarg) if isinstance(q, cst.Param)]
    if any(q.name.value == var for q in every):
        return stmt, f"`{var}` is a parameter of {func.name.value}(): its callers may pass another pipeline (or anything); {by_hand}"
    for node in own.nodes:
        if isinstance(node, (cst.Global, cst.Nonlocal)) and any(n.name.value == var for n in node.names):
            return node, f"`{var}` holds a pipeline and is declared {'global' if isinstance(node, cst.Global) else 'nonlocal'}: other code may assign it; {by_hand}"
    for nested in own.nested:
        if isinstance(nested, (cst.FunctionDef, cst.ClassDef)) and nested.name.value == var:
            return nested, f"`{var}` holds a pipeline and is also defined here as a {'function' if isinstance(nested, cst.FunctionDef) else 'class'}: {by_hand}"
    for nested in call_sites._free_in_nested(own, {var}, parents):
        return nested, f"a nested function uses `{var}`, which holds the pipeline chosen in {func.name.value}(): {by_hand}"
    from dali_migrate import pipe_lists

    nones, choices, calls = [], [], []  # (assignment statements), (name node, statement), call callees
    bound = []  # (the variable where an assignment binds it, the statement)
    for n in own.nodes:
        if not (isinstance(n, cst.Name) and n.value == var) or pipe_lists._attribute_name(n, parents):
            continue
        where = parents.statement(n)
        if pipe_lists._binds_name(n, parents):
            target = parents.of(n)
            holder = parents.of(target)
            picked = _choices(holder.value) if isinstance(holder, cst.Assign) and len(holder.targets) == 1 else None
            if not (isinstance(target, cst.AssignTarget) and target.target is n and picked is not None):
                return where, (f"`{var}` holds a pipeline and is also assigned here other than as `{var} = <pipeline>` "
                               f"(`{one_line_statement(where)}`): dali-migrate cannot follow what it holds; {by_hand}")
            bound.append((n, where))
            if len(picked) == 1 and picked[0].value == "None":
                nones.append(where)
            elif any(p.value == "None" for p in picked):
                return where, f"`{var}` may be None or a pipeline after `{one_line_statement(where)}`: {by_hand}"
            else:
                choices.extend((p, where) for p in picked)
            continue
        call = parents.of(n)
        if not (isinstance(call, cst.Call) and call.func is n):
            return where, (f"`{var}` holds a pipeline and is used here other than by calling it to make one "
                           f"(`{one_line_statement(where)}`): dali-migrate cannot follow it; {by_hand}")
        calls.append(n)
    span = parents.span
    first_call = min(span[id(c)][0] for c in calls)
    for target, where in bound:
        if span[id(target)][0] > first_call:
            return where, (f"`{var}` is assigned again after `{var}(...)` made a pipeline: dali-migrate follows a choice "
                           f"of pipeline made once, before its calls; {by_hand}")
    for p, where in choices:
        if _local(p.value, func, parents):
            return where, (f"`{p.value}` is a name of {func.name.value}() (or of a function around it), not the pipeline "
                           f"of the file: dali-migrate cannot follow what `{var}` holds; {by_hand}")
    if nones and not (len(nones) == 1 and _overwritten(nones[0], calls, parents)):
        return nones[0], (f"`{var}` may still be None where `{var}(...)` is called (dali-migrate follows `{var} = None` "
                          f"only when a later if/else of the same block assigns a pipeline on every branch "
                          f"and the calls come after that if); {by_hand}")
    return ChoiceAlias(key=(id(func), var), name=var, choices=tuple(dict.fromkeys(p.value for p, _ in choices)), func=func,
                       refs=tuple(calls), bound_at=tuple((p.value, where) for p, where in choices))


def _local(name: str, func: cst.FunctionDef, parents) -> bool:
    """Is ``name`` a parameter or a local of ``func`` or of a function around it (so that it does
    not read the module's pipeline)? Class bodies around a method do not count: a method does not
    see their names."""
    scope = func
    while scope is not None:
        if isinstance(scope, (cst.FunctionDef, cst.Lambda)):
            params = scope.params
            every = [*params.posonly_params, *params.params, *params.kwonly_params]
            every += [q for q in (params.star_arg, params.star_kwarg) if isinstance(q, cst.Param)]
            if any(q.name.value == name for q in every):
                return True
            own = call_sites._scope_nodes(scope, parents)
            if call_sites._rebinds(own, name, parents) or any(
                isinstance(n, (cst.FunctionDef, cst.ClassDef)) and n.name.value == name for n in own.nested
            ):
                return True
        scope = parents.scope(scope)
    return False


def _overwritten(none_stmt, calls: list, parents) -> bool:
    """Does every path from ``none_stmt`` (``var = None``) to the calls assign the variable again?
    Proved simply: a later statement of the same block is an ``if`` whose every branch (``else``
    included) assigns it in a statement of the branch's own block, and every call is in a
    statement of the block after that ``if``. A branch can leave without that statement only by
    ``return``, ``break``, ``continue`` or an exception, each of which skips the rest of the block
    and so the calls."""
    block = parents.of(none_stmt)
    body = list(getattr(block, "body", ()))
    if none_stmt not in body:
        return False
    var = calls[0].value
    after = body[body.index(none_stmt) + 1:]
    for k, stmt in enumerate(after):
        if any(parents.contains(stmt, c) for c in calls):
            return False  # a call before any if that assigns it on every branch
        if isinstance(stmt, cst.If) and _every_branch_assigns(stmt, var):
            rest = after[k + 1:]
            return all(any(parents.contains(s, c) for s in rest) for c in calls)
    return False


def _every_branch_assigns(node: cst.If, var: str) -> bool:
    branch = node
    while True:
        if not _block_assigns(branch.body, var):
            return False
        if isinstance(branch.orelse, cst.If):
            branch = branch.orelse
            continue
        return isinstance(branch.orelse, cst.Else) and _block_assigns(branch.orelse.body, var)


def _block_assigns(block, var: str) -> bool:
    lines = block.body if isinstance(block, cst.IndentedBlock) else [block]  # a SimpleStatementSuite: one line
    for line in lines:
        if isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and any(
            isinstance(small, cst.Assign) and len(small.targets) == 1
            and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == var
            and not (isinstance(small.value, cst.Name) and small.value.value == "None")
            for small in line.body
        ):
            return True
    return False


def check_choice_aliases(plans: dict, pipelines: dict, parents) -> None:
    """The code after a choice of pipeline is planned once per pipeline the variable may hold and
    written once: each of them must be a pipeline converted here, in the same form, and every
    rewrite there (and every argument dropped from the call) must come out the same for each."""
    from dali_migrate.rules import external_source as external_source_rule

    groups: dict = {}  # key -> (ChoiceAlias, [pipeline names that followed it])
    for name, p in plans.items():
        for alias in p.choice_aliases:
            names = groups.setdefault(alias.key, (alias, []))[1]
            if name not in names:
                names.append(name)
    for alias, names in groups.values():
        var, fname = alias.name, alias.func.name.value
        reasons = []
        for other, where in alias.bound_at:
            if other not in names:
                reasons.append((where, (
                    f"`{var}` may also hold `{other}`, which dali-migrate does not convert here (not a pipeline of this file, "
                    f"or one left as it was: see its marker), and the code after `{var}(...)` serves both: convert {other} "
                    f"first, or convert by hand")))
        forms = {n: external_source_rule.iterator_restart(pipelines[n], plans[n]) for n in names}
        for n, form in forms.items():
            if isinstance(form, str):
                reasons.append((None, f"{n} cannot be converted ({form}), and {', '.join(sorted(set(names) - {n}))} "
                                      f"is chosen with it through `{var}` in {fname}()"))
        if len({f is True for f in forms.values() if not isinstance(f, str)}) > 1:
            reasons.append((alias.func, (
                f"the pipelines chosen through `{var}` in {fname}() would convert in different forms (some with "
                f"fn.external_source driven by a framework iterator, some without): convert by hand")))
        shared: dict = {}  # id(node) -> [(pipeline, rule, site)]
        for n in names:
            for node_id, (rule, site) in plans[n].rewrites.items():
                if node_id in plans[n].chosen_rewrites.get(alias.key, ()):
                    shared.setdefault(node_id, []).append((n, rule, site))
        for node_id, entries in shared.items():
            node = call_sites._node_by_id(node_id, parents)
            texts = {_render(rule, node, site) for _, rule, site in entries}
            if len(texts) > 1 or len(entries) != len(names):
                reasons.append((parents.statement(node), (
                    f"the pipelines chosen through `{var}` ({', '.join(names)}) would need different code for "
                    f"`{_snippet(node)}`: convert by hand")))
        for ref in alias.refs:
            call = parents.of(ref)
            for field in ("drop_kwargs", "none_kwargs"):
                if len({tuple(sorted(getattr(plans[n], field).get(id(call), ()))) for n in names}) > 1:
                    reasons.append((parents.statement(call), (
                        f"the pipelines chosen through `{var}` ({', '.join(names)}) need different arguments dropped from "
                        f"`{var}(...)` (a setting of one is a parameter of another): convert by hand")))
        helpers: dict = {}
        for n in names:
            for key, text in plans[n].helpers.items():
                helpers.setdefault(key, set()).add(code(text) if isinstance(text, cst.CSTNode) else repr(text))
        if any(len(texts) > 1 for texts in helpers.values()):
            reasons.append((alias.func, f"the pipelines chosen through `{var}` in {fname}() need different helper code: convert by hand"))
        # (one node may need several rewrites that differ: one reason for each statement says it)
        reasons = list({(id(stmt), why): (stmt, why) for stmt, why in reasons}.values())
        for n in names:
            plans[n].blockers.extend(reasons)
            plans[n].chosen_with |= set(names) - {n}


def _render(rule, node, site):
    new = rule.rewrite(node, call_sites._receiver(node), site)
    return None if new is None else code(new)


def _snippet(node) -> str:
    text = code(node).strip().splitlines()[0]
    return text if len(text) <= 60 else text[:57] + "..."
