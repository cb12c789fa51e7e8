"""Follows what a converted pipeline function returns, and what ``pipe.run()`` returns, through
the file, and plans the rewrite of each use by the call-site rules.

Only uses it can see and understand are rewritten. Any other use of the pipeline object
(passed to a function, stored in a list, used from another scope that rebinds it) means the
pipeline and its uses are left as they were, with a marker: converting the definition would
break that use.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import libcst as cst
import libcst.matchers as m

from dali_migrate.parents import Parents
from dali_migrate.pipeline_analysis import NOT_CONVERTED, PERF_ONLY, SETTINGS, PipelineInfo
from dali_migrate.rules.base import CallSiteRule

REMOVE = object()


@dataclasses.dataclass
class Site:
    """What a call-site rule may need besides the call itself."""

    ndd: str
    numpy: Optional[str]
    pipeline: PipelineInfo
    construction: Optional[cst.Call]  # the ``P(...)`` call that made the pipeline object (None: via a factory)
    reader_call: Optional[cst.Call]  # the converted reader construction (for epoch sizes)
    names: object = None  # the file's DaliNames (to recognise framework iterators)
    taken: set = dataclasses.field(default_factory=set)  # identifiers the module uses


@dataclasses.dataclass
class Plan:
    #: id(original node) -> (rule, site); the node is rewritten by rule.rewrite(updated, receiver, site)
    rewrites: dict = dataclasses.field(default_factory=dict)
    #: id(original P(...) call) -> kwargs to drop from it
    drop_kwargs: dict = dataclasses.field(default_factory=dict)
    #: id(original P(...) call) -> kwargs whose value becomes None
    none_kwargs: dict = dataclasses.field(default_factory=dict)
    #: (statement, reason): why the pipeline cannot be converted, marked at the statement
    blockers: list = dataclasses.field(default_factory=list)
    #: (id(scope), name) of every name this plan rewrites uses of
    tracked: set = dataclasses.field(default_factory=set)
    #: code the converted file needs at module level (e.g. the torch iterator class), by key
    helpers: dict = dataclasses.field(default_factory=dict)
    #: ids of the statements holding a converted framework iterator (the detector leaves them)
    converted_statements: set = dataclasses.field(default_factory=set)


def _rules_for(rules, receiver: str) -> dict:
    table = {}
    for rule in rules:
        if isinstance(rule, CallSiteRule) and rule.receiver == receiver:
            for method in rule.methods:
                table[method] = rule
    return table


class _ScopeNodes:
    """The nodes of one scope, not descending into nested functions, lambdas or classes."""

    def __init__(self, scope, parents: Parents):
        self.scope = scope
        self.nodes: list = []
        self.nested: list = []
        # A function's parameters (defaults) belong to the outer scope: start at its body.
        root = scope.body if isinstance(scope, cst.FunctionDef) else scope
        lo, hi = parents.span[id(root)]
        pos = lo
        order = parents.order
        while pos < hi:
            node = order[pos]
            if node is not scope and isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                self.nested.append(node)
                pos = parents.span[id(node)][1]
                continue
            self.nodes.append(node)
            pos += 1


def _scope_nodes(scope, parents: Parents) -> _ScopeNodes:
    cache = parents.__dict__.setdefault("_scope_nodes", {})
    hit = cache.get(id(scope))
    if hit is None:
        hit = cache[id(scope)] = _ScopeNodes(scope, parents)
    return hit


def _binds(nested, name: str, parents: Parents) -> bool:
    """Does a nested function/lambda/class make ``name`` a local of its own?"""
    if isinstance(nested, (cst.FunctionDef, cst.Lambda)):
        params = nested.params
        every = [*params.posonly_params, *params.params, *params.kwonly_params]
        every += [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
        if any(p.name.value == name for p in every):
            return True
    body = nested.body
    declared = {n.name.value for g in parents.find((cst.Global, cst.Nonlocal), within=body) for n in g.names}
    return name in _bound_in(body, parents) and name not in declared


def _bound_in(node, parents: Parents) -> set:
    """Names bound anywhere in ``node``'s subtree (assignment, for, with-as, walrus targets)."""
    found = set()
    for t in parents.find((cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.AsName, cst.NamedExpr), within=node):
        target = t.name if isinstance(t, cst.AsName) else t.target
        if not isinstance(target, (cst.Attribute, cst.Subscript)):
            found |= {n.value for n in parents.find(cst.Name, within=target)}
    return found


def _free_in_nested(nodes: _ScopeNodes, names: set, parents: Parents) -> list:
    """Nested scopes that read one of ``names`` from this scope (closures, global readers)."""
    found = []
    for nested in nodes.nested:
        used = {n.value for n in parents.find(cst.Name, within=nested)} & names
        if any(not _binds(nested, n, parents) for n in used):
            found.append(nested)
    return found


def _kind(node, parents: Parents, state) -> Optional[str]:
    """'pipe', 'outputs' (the tuple pipe.run() returns), 'batch' (one TensorList) or None."""
    if isinstance(node, cst.Name):
        if node.value == state.var:
            return "pipe"
        if node.value in state.outputs:
            return "outputs"
        if node.value in state.batches:
            return "batch"
        return None
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        base = _kind(node.func.value, parents, state)
        if node.func.attr.value == "run" and (
            base == "pipe" or (isinstance(node.func.value, cst.Name) and node.func.value.value in state.other_pipes)
        ):
            return "outputs"
        if base == "batch" and node.func.attr.value in ("as_cpu", "gpu", "cpu"):
            return "batch"
        return None
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        if _kind(node.value, parents, state) == "outputs":
            return "batch"
    return None


@dataclasses.dataclass
class _State:
    var: str
    #: variables of the same scope holding other converted pipelines: their outputs are tracked too,
    #: since code often reuses names (``images, labels = val.run()`` after the training loop)
    other_pipes: set = dataclasses.field(default_factory=set)
    outputs: set = dataclasses.field(default_factory=set)
    batches: set = dataclasses.field(default_factory=set)


def _track_names(nodes: list, state: _State, parents: Parents) -> list:
    """Grow the sets of names that hold pipeline outputs; return the assignments that break tracking."""
    assigns = [n for n in nodes if isinstance(n, (cst.Assign, cst.For))]
    changed = True
    while changed:
        changed = False
        for node in assigns:
            value = node.value if isinstance(node, cst.Assign) else node.iter
            kind = _kind(value, parents, state)
            if kind is None:
                continue
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for target in targets:
                if isinstance(node, cst.For):
                    kind_here = "batch" if kind == "outputs" else None
                    if kind_here and isinstance(target, cst.Name) and target.value not in state.batches:
                        state.batches.add(target.value)
                        changed = True
                    continue
                if isinstance(target, cst.Name):
                    bucket = state.outputs if kind == "outputs" else state.batches
                    if target.value not in bucket:
                        bucket.add(target.value)
                        changed = True
                elif isinstance(target, (cst.Tuple, cst.List)) and kind == "outputs":
                    for el in target.elements:
                        if isinstance(el.value, cst.Name) and el.value.value not in state.batches:
                            state.batches.add(el.value.value)
                            changed = True
    # A tracked name also bound to something else cannot be rewritten by name.
    conflicts = []
    tracked = state.outputs | state.batches
    for node in assigns:
        value = node.value if isinstance(node, cst.Assign) else node.iter
        if _kind(value, parents, state) is not None:
            continue
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        for target in targets:
            if {n.value for n in parents.find(cst.Name, within=target)} & tracked:
                conflicts.append(node)
    return conflicts


def plan(module, parents: Parents, pipelines: dict, rules, ndd: str, numpy: Optional[str], readers: dict,
         names=None, taken=frozenset()) -> dict:
    """Plan per pipeline name: {name: Plan}."""
    pipe_rules = _rules_for(rules, "pipeline")
    pipe_rules.update({("iterator", k): v for k, v in _rules_for(rules, "iterator").items()})
    batch_rules = _rules_for(rules, "batch")
    pipe_vars: dict = {}  # id(scope) -> names of variables holding a converted pipeline
    for name in pipelines:
        for ref in parents.names(name):
            call = parents.of(ref)
            assign = parents.of(call) if isinstance(call, cst.Call) else None
            if isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name):
                scope = parents.scope(assign) or module
                pipe_vars.setdefault(id(scope), set()).add(assign.targets[0].target.value)
    plans = {}
    for name, info in pipelines.items():
        p = Plan()
        plans[name] = p
        # The pipeline function itself, then any function that returns what it made (a factory:
        # `def make(): pipe = p(...); pipe.build(); return pipe`), whose callers hold it too.
        follow = [name]
        for callee in follow:
            for ref in list(parents.names(callee)):
                parent = parents.of(ref)
                if isinstance(parent, cst.FunctionDef) and parent.name is ref:
                    continue
                stmt = parents.statement(ref)
                call = parent if isinstance(parent, cst.Call) and parent.func is ref else None
                assign = parents.of(call) if call is not None else None
                if not (
                    isinstance(assign, cst.Assign)
                    and assign.value is call
                    and len(assign.targets) == 1
                    and isinstance(assign.targets[0].target, cst.Name)
                ):
                    p.blockers.append((stmt, f"{callee} is used here in a way dali-migrate cannot follow; convert the pipeline and this use by hand"))
                    continue
                if callee == name:
                    _plan_construction(call, info, p, stmt)
                var = assign.targets[0].target.value
                scope = parents.scope(assign) or module
                site = Site(ndd=ndd, numpy=numpy, pipeline=info, construction=call if callee == name else None,
                            reader_call=readers.get(name), names=names, taken=set(taken))
                others = pipe_vars.get(id(scope), set()) - {var}
                for factory in _plan_uses(scope, var, assign, parents, site, pipe_rules, batch_rules, p, others):
                    if factory not in follow:
                        follow.append(factory)
    _share_blockers(plans)
    return plans


def _share_blockers(plans: dict) -> None:
    """Pipelines whose outputs share names are converted together or not at all: rewriting one's
    uses by name while the other stays would turn TensorList calls into Batch calls."""
    changed = True
    while changed:
        changed = False
        for name, p in plans.items():
            if p.blockers:
                continue
            for other_name, other in plans.items():
                if other is not p and other.blockers and p.tracked & other.tracked:
                    p.blockers.append((None, f"shares output names with pipeline {other_name}, which is not converted"))
                    changed = True
                    break


def _plan_construction(call: cst.Call, info: PipelineInfo, p: Plan, stmt) -> None:
    params = {
        q.name.value
        for q in [*info.func.params.posonly_params, *info.func.params.params, *info.func.params.kwonly_params]
    }
    drop = []
    for arg in call.args:
        if arg.star:
            p.blockers.append((stmt, f"{info.name}(...) is called with *args/**kwargs: cannot see the pipeline settings, convert by hand"))
        elif arg.keyword is not None and arg.keyword.value == "seed" and m.matches(
            arg.value, m.UnaryOperation(operator=m.Minus(), expression=m.Integer("1"))
        ):
            # -1 is a pipeline's "no fixed seed"; an RNG wants None for that.
            p.none_kwargs.setdefault(id(call), []).append("seed")
        elif arg.keyword is None or arg.keyword.value in params or arg.keyword.value in SETTINGS:
            continue
        elif arg.keyword.value in PERF_ONLY:
            drop.append(arg.keyword.value)
        elif arg.keyword.value in NOT_CONVERTED:
            p.blockers.append((stmt, NOT_CONVERTED[arg.keyword.value]))
        else:
            p.blockers.append((stmt, f"{info.name}(...) gets {arg.keyword.value}=, which is neither a parameter nor a pipeline setting dali-migrate knows"))
    if drop:
        p.drop_kwargs[id(call)] = drop


def _plan_uses(scope, var, assign, parents, site, pipe_rules, batch_rules, p: Plan, others=frozenset()) -> None:
    own = _scope_nodes(scope, parents)

    def binds_var(target) -> bool:
        return any(n.value == var for n in parents.find(cst.Name, within=target))

    bindings = [
        n
        for n in own.nodes
        if (isinstance(n, cst.AssignTarget) and binds_var(n.target))
        or (isinstance(n, (cst.For, cst.AugAssign, cst.AnnAssign)) and binds_var(n.target))
    ]
    nodes = own.nodes
    if len(bindings) != 1:
        nodes = _nodes_while_bound(bindings, assign, own.nodes, parents)
        if nodes is None:
            p.blockers.append((parents.statement(assign), f"`{var}` is assigned more than once: dali-migrate cannot follow which pipeline it holds"))
            return []
    state = _State(var=var, other_pipes=set(others))
    for node in _track_names(nodes, state, parents):
        p.blockers.append((parents.statement(node), "a name holding pipeline outputs is also assigned other values here: convert by hand"))
    if nodes is not own.nodes and (state.outputs or state.batches):
        # Outputs may outlive the next assignment of the variable; by name they cannot be told
        # apart from the outputs of what it holds next.
        p.blockers.append((parents.statement(assign), f"`{var}` is assigned more than once and its outputs are kept in variables: convert by hand"))
        return []
    tracked = {var} | state.outputs | state.batches
    p.tracked |= {(id(scope), n) for n in state.outputs | state.batches}
    for nested in _free_in_nested(own, tracked, parents):
        p.blockers.append((nested, f"a nested function uses the pipeline `{var}` or its outputs: convert by hand"))
    factories = []
    for node in nodes:
        if isinstance(node, cst.Name) and node.value in tracked:
            if _is_binding(node, parents):
                continue
            parent = parents.of(node)
            if (
                node.value == var
                and isinstance(parent, cst.Return)
                and isinstance(scope, cst.FunctionDef)
                and parents.scope(scope) is None
            ):
                factories.append(scope.name.value)  # its callers get the pipeline: follow them
                continue
            _plan_expr(node, _kind(node, parents, state), parents, state, site, pipe_rules, batch_rules, p)
        elif isinstance(node, (cst.Subscript, cst.Call)) and _kind(node, parents, state) == "batch":
            # Subscripts and calls that yield batches (out[0], b.as_cpu()) are expressions of their own.
            _plan_expr(node, "batch", parents, state, site, pipe_rules, batch_rules, p)
    return factories


def _nodes_while_bound(bindings: list, assign, nodes: list, parents: Parents) -> Optional[list]:
    """The scope's nodes from ``assign`` up to the variable's next assignment, when every
    assignment of it is a plain ``var = ...`` statement of one block (straight-line code, so each
    use sees the last assignment above it: `pipe = train(...)` ... `pipe = val(...)`); else None."""
    stmts = []
    for b in bindings:
        owner = parents.of(b)
        stmt = parents.statement(b)
        if not (isinstance(b, cst.AssignTarget) and isinstance(owner, cst.Assign) and len(owner.targets) == 1):
            return None
        stmts.append(stmt)
    blocks = {id(parents.of(s)) for s in stmts}
    if len(blocks) != 1 or parents.statement(assign) not in stmts:
        return None
    starts = sorted(parents.span[id(s)][0] for s in stmts)
    var = bindings[0].target.value if isinstance(bindings[0].target, cst.Name) else None
    if var is None or any(
        isinstance(n, cst.Name) and n.value == var and parents.span[id(n)][0] < starts[0] for n in nodes
    ):
        return None  # a use above the first assignment (in a loop: the last one's value)
    lo = parents.span[id(parents.statement(assign))][0]
    later = [x for x in starts if x > lo]
    hi = later[0] if later else len(parents.order)
    # The assignment's own value (`pipe = make(pipe)`) reads the previous binding: start after it.
    lo = parents.span[id(assign.value)][1] if isinstance(assign, cst.Assign) else lo
    return [n for n in nodes if lo <= parents.span[id(n)][0] < hi]


def _is_binding(ref: cst.Name, parents: Parents) -> bool:
    cur, parent = ref, parents.of(ref)
    while isinstance(parent, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
        cur, parent = parent, parents.of(parent)
    if isinstance(parent, cst.AssignTarget) and parent.target is cur:
        return True
    if isinstance(parent, cst.For) and parent.target is cur:
        return True
    return False


def _disabled(rule, enabled) -> bool:
    return enabled is not None and rule.id not in enabled


def _plan_expr(node, kind, parents, state, site, pipe_rules, batch_rules, p: Plan) -> None:
    parent = parents.of(node)
    stmt = parents.statement(node)
    if kind == "pipe":
        iterator = _iterator_call(node, parents, site)
        if iterator is not None:
            call, qualified = iterator
            rule = pipe_rules.get(("iterator", qualified))
            if rule is None:
                p.blockers.append((stmt, f"the pipeline `{state.var}` is given to {qualified.rsplit('.', 1)[-1]}, which dali-migrate does not convert: convert by hand"))
            else:
                _use(rule, call, stmt, site, p)
                if id(call) in p.rewrites:
                    p.converted_statements.add(id(stmt))
                    for key, text in getattr(rule, "helpers", lambda site: {})(site).items():
                        p.helpers[key] = text
            return
        call = parents.of(parent) if isinstance(parent, cst.Attribute) and parent.value is node else None
        if not (isinstance(call, cst.Call) and call.func is parent):
            p.blockers.append((stmt, f"the pipeline object `{state.var}` is used here in a way dali-migrate cannot follow (e.g. passed to an iterator); convert by hand"))
            return
        rule = pipe_rules.get(parent.attr.value)
        if rule is None:
            p.blockers.append((stmt, f"{state.var}.{parent.attr.value}() has no automatic dynamic-mode conversion: convert by hand"))
            return
        _use(rule, call, stmt, site, p)
        return
    if kind != "batch":
        return
    if isinstance(parent, cst.Attribute) and parent.value is node:
        call = parents.of(parent)
        if isinstance(call, cst.Call) and call.func is parent:
            rule = batch_rules.get(parent.attr.value)
            if rule is None:
                p.blockers.append((stmt, f"TensorList.{parent.attr.value}() has no automatic counterpart on ndd.Batch: convert by hand"))
            else:
                _use(rule, call, stmt, site, p)
            return
        p.blockers.append((stmt, f"TensorList.{parent.attr.value} differs on ndd.Batch: convert by hand"))
        return
    if isinstance(parent, cst.Subscript) and parent.value is node:
        rule = batch_rules.get("__getitem__")
        if rule is None or len(parent.slice) != 1 or not isinstance(parent.slice[0].slice, cst.Index):
            p.blockers.append((stmt, "indexing a TensorList: use .select(i) on the ndd.Batch (not converted automatically here)"))
        else:
            _use(rule, parent, stmt, site, p)
        return
    if isinstance(parent, cst.Arg):
        call = parents.of(parent)
        if isinstance(call, cst.Call) and m.matches(call.func, m.Name("len")) and len(call.args) == 1:
            rule = batch_rules.get("__len__")
            if rule is None:
                p.blockers.append((stmt, "len() of a TensorList: use batch.batch_size"))
            else:
                _use(rule, call, stmt, site, p)


def _iterator_call(node, parents, site):
    """(the call, its qualified name) when ``node`` is the pipelines argument of a framework
    iterator from ``nvidia.dali.plugin`` (``It(pipe, ...)``, ``It([pipe], ...)``), else None."""
    if site.names is None:
        return None
    cur = parents.of(node)
    if isinstance(cur, cst.Element):
        lst = parents.of(cur)
        if not isinstance(lst, (cst.List, cst.Tuple)):
            return None
        cur = parents.of(lst)
    if not isinstance(cur, cst.Arg):
        return None
    call = parents.of(cur)
    if not isinstance(call, cst.Call):
        return None
    q = site.names.qualify(call.func) or ""
    if not q.startswith("nvidia.dali.plugin."):
        return None
    first = call.args[0] if call.args else None
    if cur is not first and not (cur.keyword is not None and cur.keyword.value == "pipelines"):
        return None
    return call, q


def _use(rule, node, stmt, site, p: Plan) -> None:
    reason = rule.blocker(node, site)
    if reason:
        p.blockers.append((stmt, reason))
    elif rule.rewrite(node, _receiver(node), site) is None and not _alone_in_statement(node, stmt):
        p.blockers.append((stmt, f"{rule.summary}, but here its value is used: convert by hand"))
    else:
        p.rewrites[id(node)] = (rule, site)


def _receiver(node):
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        return node.func.value
    if isinstance(node, cst.Subscript):
        return node.value
    if isinstance(node, cst.Call) and node.args:
        return node.args[0].value
    return node


def _alone_in_statement(node, stmt) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and any(
        isinstance(s, cst.Expr) and s.value is node for s in stmt.body
    )
