"""Lists of converted pipelines, one per GPU, as DALI's single-process multi-GPU examples make them:

    pipes = [train_pipe(root, device_id=i, shard_id=i, num_shards=n) for i in range(n)]
    pipes[0].build()
    loader = DALIGenericIterator(pipes, ["data", "label"], reader_name="Reader")

or ``DALIGenericIterator([pipe0, pipe1], ...)`` over pipelines held by variables of their own, or
a list a loop fills, as DALI's JAX examples do (:func:`plan_appended`):

    pipelines = []
    for id, device in enumerate(jax.devices()):
        pipeline = train_pipe(root, shard_id=id, num_shards=jax.device_count(), device_id=id)
        pipelines.append(pipeline)

``call_sites`` hands a list made by a comprehension to :func:`plan`: the list's variable may be
given to a framework iterator (whose rule converts it, ``rules/torch_iterator.py``), and an element
picked by a literal index may be built (the call is removed) or asked its epoch size
(``pipes[0].epoch_size("Reader")``: the reader of that element, the comprehension's variable
replaced by the value it has for that element), and a loop that only builds them
(``for pipe in pipes: pipe.build()``) goes. Any other use (``pipes[0].run()``, a loop over the
list, the list passed on) leaves the pipeline to a person: its outputs would not be followed;
except a list handed to a function or class of the file that only gives it to a framework
iterator (:func:`_plan_handed`).

The comprehension is evaluated again where the iterator needs each element's reader metadata
(``[<reader>.get_metadata() for i in range(n)]``), so its iterable must give the same values
twice: ``range(...)`` of names and literals, a list or tuple written out, ``jax.devices()`` /
``jax.local_devices()`` (fixed for the life of the process), or ``enumerate()`` of one of those.

Such a comprehension may also call a loop's variable that holds, in turn, each pipeline of a list
written in the file (``for pipe_t in pipe_types: pipe_name, label_range = pipe_t``, DALI's "various
readers" notebooks): see :class:`ClassAlias` and :func:`check_class_lists`.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import libcst as cst
from dali_migrate import match as m

from dali_migrate import call_sites, iterator_subclasses
from dali_migrate.cst_util import code, dotted, one_line_statement
from dali_migrate.rules.pipe_epoch_size import _SIMPLE

#: methods of ``pipes[k]`` that convert (those of a pipeline whose outputs are not used)
_ELEMENT_METHODS = ("build", "epoch_size")


#: calls whose result is the same every time in one process (JAX fixes its devices when it starts)
_DEVICE_LISTS = ("jax.devices", "jax.local_devices")


def comprehension_reason(comp: cst.ListComp) -> Optional[str]:
    """Why the pipelines made by ``comp`` cannot be followed, or None."""
    f = comp.for_in
    it, target = f.iter, f.target
    if _is_call(it, "enumerate") and len(it.args) == 1:
        # `for i, device in enumerate(devices)`: the same pairs when the iterable gives the same values
        it = it.args[0].value
        if not (isinstance(target, cst.Tuple) and len(target.elements) == 2
                and all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in target.elements)):
            target = None
    elif not isinstance(target, cst.Name):
        target = None
    if f.inner_for_in is not None or f.ifs or f.asynchronous is not None or target is None:
        return "a list of pipelines made by a comprehension with several `for`s, an `if` or a target that is not a name: convert by hand"
    if isinstance(it, (cst.List, cst.Tuple)):
        ok = all(isinstance(e, cst.Element) and isinstance(e.value, _SIMPLE) for e in it.elements)
    elif any(_is_call(it, name) for name in _DEVICE_LISTS):
        ok = not it.args
    else:
        ok = (
            _is_call(it, "range")
            and 1 <= len(it.args) <= 3
            and all(a.keyword is None and not a.star and isinstance(a.value, _SIMPLE) for a in it.args)
        )
    if not ok:
        return ("a list of pipelines made over an iterable other than range(...) of names and literals, a list written out "
                "or jax.devices() (or enumerate() of one): convert by hand")
    return None


def _is_call(node, dotted_name: str) -> bool:
    return (
        isinstance(node, cst.Call)
        and dotted(node.func) == dotted_name
        and not any(a.star or a.keyword is not None for a in node.args)
    )


def element_value(comp: cst.ListComp, k: int) -> Optional[cst.BaseExpression]:
    """The value the comprehension's variable has for element ``k``, when the code says it."""
    it = comp.for_in.iter
    if not isinstance(comp.for_in.target, cst.Name) or not (isinstance(it, (cst.List, cst.Tuple)) or _is_call(it, "range")):
        return None
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
    k = iterator_subclasses.skipped(call, site.parents, site.names)  # a subclass's own parameters first
    arg = call.args[k] if len(call.args) > k and call.args[k].keyword is None else next(
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
    # the scope's targets, found once for every variable (by exact type: isinstance on libcst's
    # classes is slow, and none of these has subclasses)
    targets = [n.target for n in nodes.nodes if type(n) in _TARGET_HOLDERS]
    out = {}
    for var, made in calls.items():
        sites = [make_site(name, call) for name, call in made]
        bound = 0
        for target in targets:
            if any(x.value == var for x in parents.find(cst.Name, within=target)):
                bound += 1
        out[var] = sites + [None] * (bound - len(sites))
    return out


_TARGET_HOLDERS = frozenset({cst.AssignTarget, cst.For, cst.AugAssign, cst.AnnAssign, cst.NamedExpr})


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
    loops = []  # `for pipe in pipes: pipe.build()`, as DALI's multi-GPU examples get them ready
    for node in refs:
        if call_sites._is_binding(node, parents):
            continue
        use = parents.statement(node)
        readying = _readying_loop(node, parents, pipe_rules)
        if readying is not None:
            loops.append(readying)
        elif not _plan_use(node, var, site, parents, pipe_rules, p):
            p.blockers.append((use, f"the list of pipelines `{var}` is used here in a way dali-migrate cannot follow (`{one_line_statement(use)}`); convert by hand"))
    if loops:
        _drop_loops(loops, own, var, site, parents, p)


def _other_binding(node, parents) -> bool:
    parent = parents.of(node)
    return isinstance(parent, (cst.AugAssign, cst.AnnAssign, cst.NamedExpr)) and parent.target is node


def _plan_use(node, var, site, parents, pipe_rules, p) -> bool:
    """Plan one use of the list's variable; False when it is not one this module follows."""
    parent = parents.of(node)
    stmt = parents.statement(node)
    iterator = call_sites._iterator_call(node, parents, site)
    if iterator is not None and isinstance(parent, cst.Arg):
        _plan_iterator(*iterator, stmt, var, site, pipe_rules, p)
        return True
    handed = _handed_to(node, parents)
    if handed is not None:
        _plan_handed(handed, var, site, parents, pipe_rules, p)
        return True
    if isinstance(parent, cst.Arg):
        return _is_len(node, parents)
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


def factory_list_reason(comp, call, label: str, stmt) -> Optional[str]:
    """Why a list that a comprehension makes by calling a function that makes and returns a pipeline
    (``pipelines = [create_pipeline(...) for idx, p in enumerate(places)]``) is left to a person;
    None when ``call`` is not such a comprehension's element. Only comprehensions of the pipeline's
    own call are followed (:func:`plan`): their elements' arguments are the pipeline's."""
    if not (isinstance(comp, cst.ListComp) and comp.elt is call):
        return None
    called = label if label.endswith(")") else f"{label}()"
    return (f"a list of pipelines is made by calling {called}, a function that makes and returns one, in a comprehension "
            f"(`{one_line_statement(stmt)}`): dali-migrate follows such a list only where the comprehension calls the "
            f"pipeline itself; convert the pipeline and this list by hand")


def _plan_iterator(call, qualified: str, stmt, var: str, site, pipe_rules, p) -> None:
    """The list's variable is the pipelines argument of the framework iterator ``call``."""
    rule = pipe_rules.get(("iterator", qualified))
    if rule is None:
        p.blockers.append((stmt, f"the pipelines `{var}` are given to {qualified.rsplit('.', 1)[-1]}, which dali-migrate does not convert: convert by hand"))
        return
    call_sites._use(rule, call, stmt, site, p)
    if id(call) in p.rewrites:
        p.converted_statements.add(id(stmt))
        p.helpers.update(rule.helpers(site, call))
        for other, other_rule in rule.also(call, site):
            p.rewrites[id(other)] = (other_rule, site)


def _handed_to(node, parents) -> Optional[tuple]:
    """(the call, ``node``'s argument, the function it runs, whether that is a class's ``__init__``) when ``node`` is
    an argument of a call of a function or a class defined once at the top of the file; else None."""
    arg = parents.of(node)
    call = parents.of(arg)
    if not (isinstance(arg, cst.Arg) and arg.value is node and isinstance(call, cst.Call) and isinstance(call.func, cst.Name)):
        return None
    func = call_sites._function_at(call, parents)
    if func is not None:
        return call, arg, func, False
    classes = [c for c in parents.find(cst.ClassDef) if c.name.value == call.func.value]
    if len(classes) != 1 or parents.scope(classes[0]) is not None:
        return None
    inits = [s for s in classes[0].body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"]
    return (call, arg, inits[0], True) if len(inits) == 1 else None


def _plan_handed(handed: tuple, var: str, site, parents, pipe_rules, p) -> None:
    """The list is handed to a function or a class of the file (``return DataLayer(pipes, ...)``)
    whose parameter goes, unchanged, to a framework iterator made there (DALI's RNN-T example:
    ``self.dali_it = DALIGenericIterator(dali_pipelines, ...)`` in ``__init__``). The iterator is
    planned as if it got the list here; its rule is told (``Site.handed``) that the arguments the
    pipelines were made with are not visible where it is made.

    Every other mention of the function or class would run the same code on something else, so
    this call must be its only one; the parameter may be read only by iterators and ``len()``."""
    call, arg, func, method = handed
    stmt = parents.statement(call)
    cls = parents.of(parents.of(func)) if method else None
    what = f"class {cls.name.value}" if method else f"{func.name.value}()"
    owner = cls if method else func
    param = call_sites._bound_param(call, func, arg, method)
    reason = None
    mentions = [r for r in call_sites._references(owner.name.value, parents) if r is not owner.name]
    if mentions != [call.func]:
        reason = f"{what} gets the pipelines `{var}` here and is used elsewhere too"
    elif method and (cls.decorators or cls.keywords or any(not m.matches(b.value, m.Name("object")) for b in cls.bases)):
        reason = f"{what} is decorated, has a base class or class keywords"
    elif func.decorators or func.asynchronous is not None:
        reason = f"{func.name.value}() is decorated or async"
    elif param is None:
        reason = f"the argument `{var}` of this call fills none of the named parameters of {what}"
    if reason is not None:
        p.blockers.append((stmt, f"{reason}: dali-migrate cannot follow what it does with them; convert by hand"))
        return
    name = param.name.value
    own = call_sites._scope_nodes(func, parents)
    if call_sites._rebinds(own, name, parents):
        p.blockers.append((func, f"{func.name.value}() assigns its parameter `{name}`, which gets the pipelines `{var}`: convert by hand"))
        return
    for nested in call_sites._free_in_nested(own, {name}, parents):
        p.blockers.append((nested, f"a nested function uses `{name}`, which gets the pipelines `{var}`: convert by hand"))
    handed_site = dataclasses.replace(site, handed=(call, func))
    for ref in own.nodes:
        if not (isinstance(ref, cst.Name) and ref.value == name and call_sites._is_variable(ref, parents)):
            continue
        use = parents.statement(ref)
        iterator = call_sites._iterator_call(ref, parents, handed_site)
        if iterator is not None and iterator[0].args and iterator[0].args[0].value is ref:
            _plan_iterator(*iterator, use, name, handed_site, pipe_rules, p)
        elif not _is_len(ref, parents):
            p.blockers.append((use, f"`{name}`, which gets the pipelines `{var}` (`{one_line_statement(stmt)}`), "
                                    f"is used here in a way dali-migrate cannot follow (`{one_line_statement(use)}`); convert by hand"))


def _is_len(node, parents) -> bool:
    """``len(node)``: a list of generators is as long as the list of pipelines."""
    arg = parents.of(node)
    outer = parents.of(arg)
    return (isinstance(arg, cst.Arg) and isinstance(outer, cst.Call) and isinstance(outer.func, cst.Name)
            and outer.func.value == "len" and len(outer.args) == 1)


def plan_appended(node, site, parents, pipe_rules, p) -> bool:
    """``node`` (a pipeline variable) is appended to a list by a loop that makes one pipeline per
    iteration, as DALI's JAX examples make one per device:

        pipelines = []
        for id, device in enumerate(jax.devices()):
            pipeline = train_pipe(root, shard_id=id, device_id=id)   # the loop's first statement
            ...
            pipelines.append(pipeline)                               # once, in the loop's own body

    The list then holds what ``[train_pipe(root, shard_id=id, device_id=id) for id, device in
    enumerate(jax.devices())]`` would, and its uses after the loop are planned as that
    comprehension's (an iterator's reader metadata evaluates it again, so its iterable must give
    the same values twice: see :func:`comprehension_reason`). False when ``node`` is not the
    argument of a ``<list>.append(...)`` (the caller marks the use); a loop that is not of this
    form gets blockers saying why."""
    arg = parents.of(node)
    call = parents.of(arg)
    if not (
        isinstance(arg, cst.Arg) and arg.value is node and arg.keyword is None and not arg.star
        and isinstance(call, cst.Call) and len(call.args) == 1
        and isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name) and call.func.attr.value == "append"
    ):
        return False
    lst = call.func.value.value
    stmt = parents.statement(call)
    reason = _loop_reason(call, stmt, site, parents)
    if reason is not None:
        p.blockers.append((stmt, f"the pipeline is appended to the list `{lst}` here: dali-migrate follows such a list only when "
                                 f"a loop fills it with the pipeline it makes first, once per iteration ({reason}); convert by hand"))
        return True
    loop = parents.of(parents.of(stmt))
    comp = cst.ListComp(elt=site.construction, for_in=cst.CompFor(target=loop.target, iter=loop.iter))
    reason = comprehension_reason(comp)
    if reason is not None:
        p.blockers.append((stmt, reason.replace("made by a comprehension", "made by a loop")))
        return True
    scope = parents.scope(loop)
    own = call_sites._scope_nodes(scope if scope is not None else _module_of(loop, parents), parents)
    refs = [n for n in own.nodes if isinstance(n, cst.Name) and n.value == lst]
    made = [n for n in refs if call_sites._is_binding(n, parents) or _other_binding(n, parents)]
    first = parents.statement(made[0]) if len(made) == 1 else None
    if not (
        first is not None
        and m.matches(first, m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name(lst))], value=m.List(elements=[]))]))
        and parents.of(first) is parents.of(loop)
        and parents.span[id(first)][0] < parents.span[id(loop)][0]
    ):
        p.blockers.append((stmt, f"the list `{lst}` is not made empty (`{lst} = []`) once, right in the block of this loop: "
                                 f"dali-migrate cannot follow which pipelines it holds; convert by hand"))
        return True
    for nested in call_sites._free_in_nested(own, {lst}, parents):
        p.blockers.append((nested, f"a nested function uses the pipelines `{lst}`: convert by hand"))
    site = dataclasses.replace(site, comp=comp)
    loop_end = parents.span[id(loop)][1]
    loops = []
    for ref in refs:
        if ref is made[0] or ref is call.func.value:
            continue
        use = parents.statement(ref)
        after = parents.span[id(ref)][0] >= loop_end
        readying = _readying_loop(ref, parents, pipe_rules) if after else None
        if readying is not None:
            loops.append(readying)
        elif not after or not _plan_use(ref, lst, site, parents, pipe_rules, p):
            p.blockers.append((use, f"the list of pipelines `{lst}` is used here in a way dali-migrate cannot follow (`{one_line_statement(use)}`); convert by hand"))
    if loops:
        _drop_loops(loops, own, lst, site, parents, p)
    return True


class _DropLoop:
    """The rewrite of a loop whose every statement goes (:func:`plan_object_list`): it goes too."""

    id = "pipe-list-loop"
    summary = "a loop over a list of pipelines that only builds them is removed"
    receiver = "pipeline"

    @staticmethod
    def rewrite(node, receiver, site):
        return None


def plan_object_list(node, site, parents, pipe_rules, p) -> bool:
    """``node`` (a pipeline variable) is written in a list of pipeline variables that loops only
    get ready, as DALI's parallel external source notebooks do:

        pipelines = [train_pipe, val_pipe]
        for pipe in pipelines:
            pipe.start_py_workers()
        for pipe in pipelines:
            pipe.build()

    Every statement of such a loop is a call that a converted pipeline drops (``build()``,
    ``start_py_workers()``: their rules remove them), so the loops go; the list stays, holding
    the generators. The pipelines of the list are converted together or not at all (the loops
    serve them all). False when ``node`` is not in a list written out and assigned to a name
    (the caller marks the use); a list used otherwise gets blockers saying why."""
    el = parents.of(node)
    lst = parents.of(el)
    assign = parents.of(lst)
    if not (
        isinstance(el, cst.Element) and el.value is node and isinstance(lst, (cst.List, cst.Tuple))
        and isinstance(assign, cst.Assign) and assign.value is lst and len(assign.targets) == 1
        and isinstance(assign.targets[0].target, cst.Name)
    ):
        return False
    var = assign.targets[0].target.value
    stmt = parents.statement(assign)
    listed = []
    for e in lst.elements:
        sites = site.scope_pipes.get(e.value.value) if isinstance(e, cst.Element) and isinstance(e.value, cst.Name) else None
        if not sites or len(sites) != 1 or sites[0] is None:
            p.blockers.append((stmt, f"the list `{var}` holds `{code(e.value if isinstance(e, cst.Element) else e).strip()}`, which "
                                     f"is not a variable assigned once from a pipeline call here: dali-migrate cannot follow "
                                     f"what a loop over it gets; convert by hand"))
            return True
        listed.append(sites[0].pipeline.name)
    scope = parents.scope(assign)
    own = call_sites._scope_nodes(scope if scope is not None else _module_of(assign, parents), parents)
    refs = [n for n in own.nodes if isinstance(n, cst.Name) and n.value == var and not _attribute_name(n, parents)]
    if sum(_binds_name(n, parents) for n in refs) != 1:
        p.blockers.append((stmt, f"`{var}` is assigned more than once: dali-migrate cannot follow which pipelines it holds"))
        return True
    for nested in call_sites._free_in_nested(own, {var}, parents):
        p.blockers.append((nested, f"a nested function uses the pipelines `{var}`: convert by hand"))
    p.listed_with |= set(listed) - {site.pipeline.name}
    loops = []
    for ref in refs:
        if ref is assign.targets[0].target:
            continue
        use = parents.statement(ref)
        readying = _readying_loop(ref, parents, pipe_rules)
        if readying is None:
            p.blockers.append((use, f"the list of pipelines `{var}` is used here other than by a loop `for pipe in {var}:` whose "
                                    f"every statement is `pipe.build()` or `pipe.start_py_workers()` (`{one_line_statement(use)}`): "
                                    f"dali-migrate cannot follow what it gets; convert by hand"))
            loops = None
            break
        loops.append(readying)
    if loops is None:
        return True
    _drop_loops(loops, own, var, site, parents, p)
    return True


def _drop_loops(loops, own, var, site, parents, p) -> None:
    """Plan the removal of ``loops`` (``[(loop, its calls)]``, :func:`_readying_calls`) over the
    pipelines ``var``, or add a blocker saying why they cannot go."""
    # The loops go: their variable must be read nowhere else (after a loop it held the last pipeline).
    targets = {loop.target.value for loop, _ in loops}
    ours = {id(loop.target) for loop, _ in loops} | {id(call.func.value) for _, calls in loops for call, _ in calls}
    for n in own.nodes:
        if isinstance(n, cst.Name) and n.value in targets and id(n) not in ours and not _attribute_name(n, parents):
            p.blockers.append((parents.statement(n), f"`{n.value}`, which loops over the pipelines `{var}` bind, is used here too: "
                                                     f"those loops cannot go; convert by hand"))
            return
    for nested in call_sites._free_in_nested(own, targets, parents):
        p.blockers.append((nested, f"a nested function uses `{', '.join(sorted(targets))}`, which loops over the pipelines `{var}` bind: convert by hand"))
        return
    for loop, calls in loops:
        for call, rule in calls:
            call_sites._use(rule, call, parents.statement(call), site, p)
        p.rewrites[id(loop)] = (_DropLoop, site)


def _readying_loop(ref, parents, pipe_rules) -> Optional[tuple]:
    """(the loop, its calls) where ``ref`` (a list's variable) is what a loop whose every statement
    gets the pipeline ready iterates (``for pipe in pipes: pipe.build()``), else None."""
    loop = parents.of(ref)
    if not (isinstance(loop, cst.For) and loop.iter is ref):
        return None
    calls = _readying_calls(loop, pipe_rules)
    return (loop, calls) if calls is not None else None


def _readying_calls(loop: cst.For, pipe_rules) -> Optional[list]:
    """[(call, rule)] when every statement of ``loop`` (``for pipe in pipes:``, no ``else``) is
    ``pipe.<method>()`` of a rule that removes the call; else None."""
    if not (isinstance(loop.target, cst.Name) and loop.orelse is None and loop.asynchronous is None
            and isinstance(loop.body, cst.IndentedBlock) and loop.body.body):
        return None
    found = []
    for line in loop.body.body:
        if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and isinstance(line.body[0], cst.Expr)):
            return None
        call = line.body[0].value
        if not (isinstance(call, cst.Call) and not call.args and isinstance(call.func, cst.Attribute)
                and m.matches(call.func.value, m.Name(loop.target.value))):
            return None
        rule = pipe_rules.get(call.func.attr.value)
        if rule is None or rule.id not in _READYING:
            return None
        found.append((call, rule))
    return found


#: rules whose calls a converted pipeline drops: a loop of nothing but these goes
_READYING = ("pipe-build", "pipe-start-py-workers")


def _module_of(node, parents):
    while parents.of(node) is not None:
        node = parents.of(node)
    return node


def _loop_reason(call, stmt, site, parents) -> Optional[str]:
    """Why the append's statement is not one of a loop that makes the appended pipeline first, or None."""
    block = parents.of(stmt)
    loop = parents.of(block)
    if not (
        isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr) and stmt.body[0].value is call
        and isinstance(loop, cst.For) and loop.body is block and isinstance(block, cst.IndentedBlock)
    ):
        return "the append is not a statement of a `for` loop's own body"
    if loop.orelse is not None or loop.asynchronous is not None:
        return "the loop has an `else:` or is async"
    if parents.find((cst.Break, cst.Continue, cst.Return, cst.Yield), within=block):
        return "the loop body holds a break, continue, return or yield"
    made = parents.statement(site.construction) if site.construction is not None else None
    if made is not block.body[0]:
        return "the pipeline is not made by the loop's first statement"
    return None


# -- lists of pipelines (classes or functions), one of them made per iteration ----------------------
#
# DALI's "various readers" notebooks keep their Pipeline classes in a list and make each in turn:
#
#     pipe_types = [[MXNetReaderPipeline, (0, 999)], [FileReadPipeline, (0, 1)]]
#     for pipe_t in pipe_types:
#         pipe_name, label_range = pipe_t
#         print("RUN: " + pipe_name.__name__)
#         pipes = [pipe_name(batch_size=BATCH_SIZE, device_id=device_id, ...) for device_id in range(N)]
#
# The loop's variable (``pipe_name``) then holds each listed pipeline in turn, so its calls are
# planned as calls of every one of them (call_sites.plan follows a ClassAlias as it follows a
# pipeline's name). The converted function keeps the class's name (``__name__``) and constructor
# signature. The code the loop shares is rewritten once for all of them: where their rewrites
# differ (each element's reader in ``pipes[0].epoch_size("Reader")``), the rewrite picks the
# loop's pipeline by identity (``... if pipe_name is MXNetReaderPipeline else ...``): exact, since
# the variable can hold nothing else there (see :func:`class_aliases`).


@dataclasses.dataclass(frozen=True)
class ClassAlias:
    """The variable of a loop over a list of pipelines: it holds each listed pipeline in turn."""

    key: tuple  # (id(the list), the pipeline's place in its entries (None: the list holds names), id(the loop))
    name: str  # the variable (``pipe_name``)
    listed: tuple  # the names the list holds in that place, in its order
    list_name: str  # what markers call the list (``pipe_types``)
    list_stmt: cst.CSTNode = dataclasses.field(compare=False)  # the statement that writes the list
    loop: cst.For = dataclasses.field(compare=False)
    #: where the variable holds a listed pipeline: the loop's body after the variable is bound
    start: int = dataclasses.field(compare=False, default=0)
    refs: tuple = dataclasses.field(compare=False, default=())  # the variable's reads there

    @property
    def label(self) -> str:
        return f"`{self.name}` (each pipeline of {self.list_name} in turn)"


def _binds_name(node: cst.Name, parents) -> bool:
    """Does ``node`` bind its name (any target, a parameter, a def, an import, ``del``, ``global``)?"""
    cur, parent = node, parents.of(node)
    while isinstance(parent, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
        cur, parent = parent, parents.of(parent)
    if isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.NamedExpr, cst.For, cst.CompFor)):
        return parent.target is cur
    if isinstance(parent, (cst.FunctionDef, cst.ClassDef)):
        return parent.name is cur
    return isinstance(parent, (cst.Param, cst.AsName, cst.ImportAlias, cst.Del, cst.NameItem))


def _entries(top) -> Optional[list]:
    """The list's entries: names, or lists/tuples of one length written out; None otherwise."""
    if not isinstance(top, (cst.List, cst.Tuple)) or not top.elements:
        return None
    if any(not isinstance(e, cst.Element) for e in top.elements):
        return None
    values = [e.value for e in top.elements]
    if all(isinstance(v, cst.Name) for v in values):
        return values
    if all(isinstance(v, (cst.List, cst.Tuple)) and all(isinstance(x, cst.Element) for x in v.elements) for v in values):
        if len({len(v.elements) for v in values}) == 1:
            return values
    return None


def class_aliases(ref: cst.Name, parents):
    """``ref`` (a pipeline's name) written in a list that loops go through: the loops' variables
    that hold each listed pipeline in turn ([ClassAlias]); (statement, reason) when such a list
    is used in a way that does not tell which pipeline a use gets; None when ``ref`` is not in a
    list (or a list's entries) written out."""
    el = parents.of(ref)
    inner = parents.of(el)
    if not (isinstance(el, cst.Element) and el.value is ref and isinstance(inner, (cst.List, cst.Tuple))):
        return None
    outer_el = parents.of(inner)
    if isinstance(outer_el, cst.Element) and isinstance(parents.of(outer_el), (cst.List, cst.Tuple)):
        top, index = parents.of(outer_el), list(inner.elements).index(el)
    else:
        top, index = inner, None
    stmt = parents.statement(top)
    entries = _entries(top)
    if entries is None or (index is None) != all(isinstance(v, cst.Name) for v in entries):
        return None
    if index is not None and not all(isinstance(v.elements[index].value, cst.Name) for v in entries):
        return stmt, "a list of pipelines whose entries do not all hold a name in the pipeline's place: convert by hand"
    listed = tuple(v.value if index is None else v.elements[index].value.value for v in entries)
    holder = parents.of(top)
    if isinstance(holder, cst.For) and holder.iter is top:
        loops, list_name = [holder], "the list of this loop"
    elif isinstance(holder, cst.Assign) and holder.value is top and len(holder.targets) == 1 and isinstance(holder.targets[0].target, cst.Name):
        var = holder.targets[0].target.value
        list_name = f"`{var}`"
        loops = []
        for n in call_sites._references(var, parents):
            if n is holder.targets[0].target:
                continue
            loop = parents.of(n)
            if _binds_name(n, parents):
                return parents.statement(n), f"{list_name} holds pipelines and is assigned more than once: dali-migrate cannot follow which it holds; convert by hand"
            if not (isinstance(loop, cst.For) and loop.iter is n):
                return parents.statement(n), (f"the list of pipelines {list_name} is used other than as the iterable of a `for` loop: "
                                              f"dali-migrate cannot follow which pipelines this use gets; convert by hand")
            loops.append(loop)
    else:
        return None
    found = []
    for loop in loops:
        alias = _loop_alias(loop, index, len(entries[0].elements) if index is not None else None, list_name, parents)
        if isinstance(alias, str):
            return loop, alias
        name, start, binding = alias
        where = parents.scope(loop)
        own = call_sites._scope_nodes(where if where is not None else _module_of(loop, parents), parents)
        end = parents.span[id(loop.body)][1]
        reads = []
        for n in own.nodes:
            if not (isinstance(n, cst.Name) and n.value == name) or _attribute_name(n, parents):
                continue
            if _binds_name(n, parents):
                if not parents.contains(binding, n):
                    return parents.statement(n), (f"`{name}` holds each pipeline of {list_name} in turn in a loop and is assigned "
                                                  f"elsewhere too: dali-migrate cannot follow which pipeline it holds; convert by hand")
            elif not start <= parents.span[id(n)][0] < end:
                return parents.statement(n), (f"`{name}` is read outside the loop over {list_name} that gives it each pipeline "
                                              f"(after the loop it holds the last one): convert by hand")
            else:
                reads.append(n)
        for nested in call_sites._free_in_nested(own, {name}, parents):
            return nested, f"a nested function uses `{name}`, which holds each pipeline of {list_name} in turn: convert by hand"
        found.append(ClassAlias(key=(id(top), index, id(loop)), name=name, listed=listed, list_name=list_name,
                                list_stmt=stmt, loop=loop, start=start, refs=tuple(reads)))
    return found


def _attribute_name(n, parents) -> bool:
    """``x.name`` or ``f(name=...)``: the name of an attribute or a keyword, not a variable."""
    parent = parents.of(n)
    return (isinstance(parent, cst.Attribute) and parent.attr is n) or (isinstance(parent, cst.Arg) and parent.keyword is n)


def _loop_alias(loop: cst.For, index, width, list_name: str, parents):
    """(the variable that holds the listed pipeline, the position from which the loop's body
    holds it, the target that binds it) for ``for pipe_name in pipes:``, ``for pipe_name,
    label_range in pipe_types:`` or ``for pipe_t in pipe_types:`` opened by ``pipe_name,
    label_range = pipe_t``; else the reason."""
    reason = (f"the loop over {list_name} takes its pipelines other than as `for pipe in pipes:`, `for pipe, x in pipe_types:` "
              f"or `for entry in pipe_types:` then `pipe, x = entry`: dali-migrate cannot follow which pipeline a use gets; convert by hand")
    if loop.asynchronous is not None or not isinstance(loop.body, cst.IndentedBlock):
        return reason
    body_start = parents.span[id(loop.body)][0]
    target = loop.target
    if index is None:
        return (target.value, body_start, target) if isinstance(target, cst.Name) else reason
    if _unpacks(target, width):
        return target.elements[index].value.value, body_start, target
    if not isinstance(target, cst.Name):
        return reason
    first = loop.body.body[0] if loop.body.body else None
    if not (
        isinstance(first, cst.SimpleStatementLine) and len(first.body) == 1 and isinstance(first.body[0], cst.Assign)
        and len(first.body[0].targets) == 1 and _unpacks(first.body[0].targets[0].target, width)
        and m.matches(first.body[0].value, m.Name(target.value))
    ):
        return reason
    where = parents.scope(loop)
    own = call_sites._scope_nodes(where if where is not None else _module_of(loop, parents), parents)
    entry_uses = [n for n in own.nodes if isinstance(n, cst.Name) and n.value == target.value and not _attribute_name(n, parents)]
    if len(entry_uses) != 2:
        return (f"`{target.value}` (an entry of {list_name}) is used besides being unpacked at the start of the loop: "
                f"dali-migrate cannot follow which pipeline a use gets; convert by hand")
    unpacked = first.body[0].targets[0].target
    return unpacked.elements[index].value.value, parents.span[id(first)][1], unpacked


def _unpacks(target, width) -> bool:
    return (
        isinstance(target, (cst.Tuple, cst.List))
        and len(target.elements) == width
        and all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in target.elements)
    )


def alias_name_read(ref: cst.Name, parents) -> bool:
    """Is ``ref`` (a read of a ClassAlias's variable) ``pipe_name.__name__`` (or ``__qualname__``)?
    A converted class is a module-level function of the class's name: the same text."""
    parent = parents.of(ref)
    return isinstance(parent, cst.Attribute) and parent.value is ref and parent.attr.value in ("__name__", "__qualname__")


def listed_problems(alias: ClassAlias, pipelines: dict, parents) -> list:
    """(statement, reason) for what the list holds besides pipelines dali-migrate converts here:
    the loop would get a converted function from one entry and something else from another."""
    found = []
    for other in dict.fromkeys(alias.listed):
        if other not in pipelines:
            found.append((alias.list_stmt, f"{alias.list_name} also holds `{other}`, which is not a pipeline that dali-migrate "
                                           f"converts in this file (or one it leaves as it was), and the loop over it makes "
                                           f"each entry with the same code: convert by hand"))
    return found


def check_class_lists(plans: dict, parents) -> None:
    """The code of a loop over a list of pipelines is planned once per listed pipeline; it is
    written once, so where their rewrites differ the rewrite becomes one that picks the loop's
    pipeline (:func:`_dispatch`), or, where that cannot be done exactly, a reason on every one."""
    lists: dict = {}  # (id(the list), place) -> ({id(loop): ClassAlias}, [pipeline names])
    for name, p in plans.items():
        for alias in p.class_lists:
            loops, names = lists.setdefault(alias.key[:2], ({}, []))
            loops[alias.key[2]] = alias
            if name not in names:
                names.append(name)
    for loops, names in lists.values():
        aliases = list(loops.values())
        order = list(dict.fromkeys(aliases[0].listed))
        group = sorted(names, key=lambda n: order.index(n) if n in order else len(order))
        reasons = []
        shared: dict = {}  # id(node) -> [(pipeline, rule, site)]
        for n in group:
            for node_id, (rule, site) in plans[n].rewrites.items():
                shared.setdefault(node_id, []).append((n, rule, site))
        for node_id, entries in shared.items():
            if len(entries) < 2:
                continue
            node = call_sites._node_by_id(node_id, parents)
            forms = [rule.rewrite(node, call_sites._receiver(node), site) for _, rule, site in entries]
            texts = [None if f is None else code(f) for f in forms]
            if len(set(texts)) == 1:
                continue
            alias = next((a for a in aliases if _holds_there(a, node, parents)), None)
            why = _dispatch_problem(alias, node, [n for n, _, _ in entries], group, texts, parents)
            if why is not None:
                reasons.append((parents.statement(node), why))
                continue
            dispatch = (_dispatch(alias.name, entries), entries[0][2])
            for n, _, _ in entries:
                plans[n].rewrites[node_id] = dispatch
        for field in ("drop_kwargs", "none_kwargs"):
            calls: dict = {}
            for n in group:
                for call_id, kws in getattr(plans[n], field).items():
                    calls.setdefault(call_id, set()).add(tuple(sorted(kws)))
            for call_id, kinds in calls.items():
                if len(kinds) > 1:
                    node = call_sites._node_by_id(call_id, parents)
                    reasons.append((parents.statement(node), "the pipelines made here in turn need different arguments dropped "
                                                             "(a setting of one is a parameter of another): convert by hand"))
        for n in group:
            plans[n].blockers.extend(reasons)


def _holds_there(alias: ClassAlias, node, parents) -> bool:
    """Does ``alias``'s variable hold the loop's pipeline where ``node`` is (its loop's body, same scope)?"""
    pos = parents.span[id(node)][0]
    return alias.start <= pos < parents.span[id(alias.loop.body)][1] and parents.scope(node) is parents.scope(alias.loop)


def _dispatch_problem(alias, node, names: list, group: list, texts: list, parents) -> Optional[str]:
    """Why ``node``, whose rewrite differs between the pipelines ``names`` of one list, cannot get
    one that picks the loop's pipeline; None when it can."""
    what = f"the pipelines of one list need different code for `{_snippet(node)}`"
    if alias is None:
        return f"{what}, outside the loop that makes them in turn: convert by hand"
    if None in texts:
        return f"{what} (for some the statement goes): convert by hand"
    if len(names) != len(group):
        return f"{what}, and dali-migrate rewrites it for only some of them: convert by hand"
    for n in names:
        # `pipe_name is P` must reach the module's P from the loop
        bindings = [r for r in parents.names(n) if _binds_name(r, parents)]
        if not (len(bindings) == 1 and isinstance(parents.of(bindings[0]), (cst.FunctionDef, cst.ClassDef))
                and parents.scope(parents.of(bindings[0])) is None):
            return f"{what}, and `{n}` is not a name bound once at the top of the file that the loop can tell it by: convert by hand"
    return None


def _snippet(node) -> str:
    text = code(node).strip().splitlines()[0]
    return text if len(text) <= 60 else text[:57] + "..."


def _dispatch(var: str, entries: list):
    """The rule of ``entries[0]`` rewriting with each pipeline's own rule and site, the results put
    together as ``(<first's> if var is First else <second's> if var is Second else <last's>)``, in
    the list's order."""
    first_rule = entries[0][1]

    def newline():
        return cst.ParenthesizedWhitespace(first_line=cst.TrailingWhitespace(), indent=True,
                                           last_line=cst.SimpleWhitespace(" " * 4))

    def rewrite(node, receiver, site):
        forms = [(n, rule.rewrite(node, receiver, s)) for n, rule, s in entries]
        expr = forms[-1][1]
        for n, form in reversed(forms[:-1]):
            test = cst.Comparison(cst.Name(var), [cst.ComparisonTarget(cst.Is(), cst.Name(n))])
            expr = cst.IfExp(test=test, body=form, orelse=expr, whitespace_before_else=newline())
        return expr.with_changes(
            lpar=[cst.LeftParen(whitespace_after=newline())],
            rpar=[cst.RightParen(whitespace_before=cst.ParenthesizedWhitespace(first_line=cst.TrailingWhitespace(), indent=True))],
        )

    return dataclasses.replace(first_rule, rewrite=rewrite)
