"""Lists of converted pipelines, one per GPU, as DALI's single-process multi-GPU examples make them:

    pipes = [train_pipe(root, device_id=i, shard_id=i, num_shards=n) for i in range(n)]
    pipes[0].build()
    loader = DALIGenericIterator(pipes, ["data", "label"], reader_name="Reader")

or ``DALIGenericIterator([pipe0, pipe1], ...)`` over pipelines held by variables of their own.

``call_sites`` hands a list made by a comprehension to :func:`plan`: the list's variable may be
given to a framework iterator (whose rule converts it, ``rules/torch_iterator.py``), and an element
picked by a literal index may be built (the call is removed) or asked its epoch size
(``pipes[0].epoch_size("Reader")``: the reader of that element, the comprehension's variable
replaced by the value it has for that element). Any other use (``pipes[0].run()``, a loop over the
list, the list passed on) leaves the pipeline to a person: its outputs would not be followed.

The comprehension is evaluated again where the iterator needs each element's reader metadata
(``[<reader>.get_metadata() for i in range(n)]``), so its iterable must give the same values
twice: ``range(...)`` of names and literals, or a list or tuple written out.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import libcst as cst

from dali_migrate import call_sites
from dali_migrate.rules.pipe_epoch_size import _SIMPLE

#: methods of ``pipes[k]`` that convert (those of a pipeline whose outputs are not used)
_ELEMENT_METHODS = ("build", "epoch_size")


def comprehension_reason(comp: cst.ListComp) -> Optional[str]:
    """Why the pipelines made by ``comp`` cannot be followed, or None."""
    f = comp.for_in
    if f.inner_for_in is not None or f.ifs or f.asynchronous is not None or not isinstance(f.target, cst.Name):
        return "a list of pipelines made by a comprehension with several `for`s, an `if` or a target that is not a name: convert by hand"
    it = f.iter
    if isinstance(it, (cst.List, cst.Tuple)):
        ok = all(isinstance(e, cst.Element) and isinstance(e.value, _SIMPLE) for e in it.elements)
    else:
        ok = (
            isinstance(it, cst.Call)
            and isinstance(it.func, cst.Name)
            and it.func.value == "range"
            and 1 <= len(it.args) <= 3
            and all(a.keyword is None and not a.star and isinstance(a.value, _SIMPLE) for a in it.args)
        )
    if not ok:
        return "a list of pipelines made over an iterable other than range(...) of names and literals or a list written out: convert by hand"
    return None


def element_value(comp: cst.ListComp, k: int) -> Optional[cst.BaseExpression]:
    """The value the comprehension's variable has for element ``k``, when the code says it."""
    it = comp.for_in.iter
    if isinstance(it, (cst.List, cst.Tuple)):
        return it.elements[k].value if k < len(it.elements) else None
    args = [a.value for a in it.args]
    if len(args) == 1:
        return cst.Integer(str(k))
    if len(args) == 2 and isinstance(args[0], cst.Integer):
        return cst.Integer(str(int(args[0].value, 0) + k))
    return None


class _Replace(cst.CSTTransformer):
    def __init__(self, name: str, value: cst.BaseExpression):
        self.name, self.value = name, value

    def leave_Name(self, original, updated):
        return self.value if original.value == self.name else updated


def element_site(site, k: int):
    """``site`` for element ``k`` of the list (its construction with the variable's value), or None."""
    value = element_value(site.comp, k)
    if value is None:
        return None
    target = site.comp.for_in.target.value
    call = site.construction
    args = [a.with_changes(value=a.value.visit(_Replace(target, value))) for a in call.args]
    return dataclasses.replace(site, construction=call.with_changes(args=args), comp=None)


def members(call: cst.Call, site) -> Optional[list]:
    """The sites of the pipelines an iterator call gets as a list (``It([pipe0, pipe1], ...)`` or
    ``It(pipes, ...)`` for a comprehension's list), or None when it gets one pipeline.
    An element that is not a pipeline variable assigned once in the scope gives None in its place."""
    arg = call.args[0] if call.args and call.args[0].keyword is None else next(
        (a for a in call.args if a.keyword is not None and a.keyword.value == "pipelines"), None
    )
    value = arg.value if arg is not None else None
    if site.comp is not None and isinstance(value, cst.Name):
        return [site]
    if not isinstance(value, (cst.List, cst.Tuple)) or len(value.elements) < 2:
        return None
    if site.construction is None:
        # a function's parameter: the names in the list are not this scope's variables
        return [None] * len(value.elements)
    out = []
    for el in value.elements:
        found = site.scope_pipes.get(el.value.value) if isinstance(el, cst.Element) and isinstance(el.value, cst.Name) else None
        out.append(found[0] if found is not None and len(found) == 1 else None)
    return out


def scope_sites(scope, parents, calls: dict, make_site) -> dict:
    """{variable: [site, ...]} for the pipeline variables of one scope: one site per assignment
    from a pipeline call (``calls``: {variable: [(pipeline name, call)]}); a variable also bound
    another way (a loop, ``pipe = None``) gets one more entry, None, so that it never counts as
    assigned once."""
    nodes = call_sites._scope_nodes(scope, parents)
    out = {}
    for var, made in calls.items():
        sites = [make_site(name, call) for name, call in made]
        bound = 0
        for n in nodes.nodes:
            target = n.target if isinstance(n, (cst.AssignTarget, cst.For, cst.AugAssign, cst.AnnAssign, cst.NamedExpr)) else None
            if target is not None and any(x.value == var for x in parents.find(cst.Name, within=target)):
                bound += 1
        out[var] = sites + [None] * (bound - len(sites))
    return out


def plan(comp: cst.ListComp, site, parents, module, pipe_rules, p) -> None:
    """Plan the uses of the list that ``comp`` makes (``site.construction`` is its element call)."""
    stmt = parents.statement(comp)
    reason = comprehension_reason(comp)
    if reason is not None:
        p.blockers.append((stmt, reason))
        return
    assign = parents.of(comp)
    if not (
        isinstance(assign, cst.Assign)
        and assign.value is comp
        and len(assign.targets) == 1
        and isinstance(assign.targets[0].target, cst.Name)
    ):
        p.blockers.append((stmt, f"a list of {site.pipeline.name} pipelines is used here in a way dali-migrate cannot follow; convert the pipeline and this use by hand"))
        return
    var = assign.targets[0].target.value
    scope = parents.scope(assign) or module
    own = call_sites._scope_nodes(scope, parents)
    refs = [n for n in own.nodes if isinstance(n, cst.Name) and n.value == var]
    if sum(call_sites._is_binding(n, parents) or _other_binding(n, parents) for n in refs) != 1:
        p.blockers.append((stmt, f"`{var}` is assigned more than once: dali-migrate cannot follow which pipelines it holds"))
        return
    for nested in call_sites._free_in_nested(own, {var}, parents):
        p.blockers.append((nested, f"a nested function uses the pipelines `{var}`: convert by hand"))
    for node in refs:
        if call_sites._is_binding(node, parents):
            continue
        use = parents.statement(node)
        if not _plan_use(node, var, site, parents, pipe_rules, p):
            p.blockers.append((use, f"the list of pipelines `{var}` is used here in a way dali-migrate cannot follow; convert by hand"))


def _other_binding(node, parents) -> bool:
    parent = parents.of(node)
    return isinstance(parent, (cst.AugAssign, cst.AnnAssign, cst.NamedExpr)) and parent.target is node


def _plan_use(node, var, site, parents, pipe_rules, p) -> bool:
    """Plan one use of the list's variable; False when it is not one this module follows."""
    parent = parents.of(node)
    stmt = parents.statement(node)
    iterator = call_sites._iterator_call(node, parents, site)
    if iterator is not None and isinstance(parent, cst.Arg):
        call, qualified = iterator
        rule = pipe_rules.get(("iterator", qualified))
        if rule is None:
            p.blockers.append((stmt, f"the pipelines `{var}` are given to {qualified.rsplit('.', 1)[-1]}, which dali-migrate does not convert: convert by hand"))
            return True
        call_sites._use(rule, call, stmt, site, p)
        if id(call) in p.rewrites:
            p.converted_statements.add(id(stmt))
            p.helpers.update(rule.helpers(site, call))
        return True
    if isinstance(parent, cst.Arg):
        outer = parents.of(parent)
        # len(pipes): a list of generators is as long as the list of pipelines
        return isinstance(outer, cst.Call) and isinstance(outer.func, cst.Name) and outer.func.value == "len" and len(outer.args) == 1
    if not (
        isinstance(parent, cst.Subscript)
        and parent.value is node
        and len(parent.slice) == 1
        and isinstance(parent.slice[0].slice, cst.Index)
        and isinstance(parent.slice[0].slice.value, cst.Integer)
    ):
        return False
    attr = parents.of(parent)
    call = parents.of(attr)
    if not (
        isinstance(attr, cst.Attribute)
        and attr.value is parent
        and isinstance(call, cst.Call)
        and call.func is attr
        and attr.attr.value in _ELEMENT_METHODS
    ):
        return False
    rule = pipe_rules.get(attr.attr.value)
    element = element_site(site, int(parent.slice[0].slice.value.value, 0))
    if rule is None or element is None:
        p.blockers.append((stmt, f"{var}[...].{attr.attr.value}(): cannot tell which pipeline of the list it is; convert by hand"))
        return True
    call_sites._use(rule, call, stmt, element, p)
    return True
