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
from dali_migrate import match as m

from dali_migrate import changed_in_place, cst_walk, iterator_subclasses
from dali_migrate.cst_util import chain_root, code, dotted, names_bound, one_line, one_line_statement
from dali_migrate.parents import Parents
from dali_migrate.pipeline_analysis import NOT_CONVERTED, PERF_ONLY, SETTINGS, PipelineInfo, CPU_ONLY_DEVICE_REASON, _synthetic, cpu_only_device
from dali_migrate.rules import batch_device_check as device_check
from dali_migrate.rules import batch_to_numpy, sample_shape, sample_to_torch
from dali_migrate.rules.base import CallSiteRule
from dali_migrate.rules.pipe_epoch_size import CannotConvert

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
    #: {variable: [Site or None]}: the scope's pipeline variables, one entry per binding (None: not
    #: from a pipeline call), for ``It([pipe0, pipe1], ...)`` (pipe_lists.py)
    scope_pipes: dict = dataclasses.field(default_factory=dict)
    #: the comprehension that makes a list of these pipelines, when the receiver is that list
    comp: Optional[cst.ListComp] = None
    #: the file's parents index (rules that look at the statements around a call: rules/pipe_feed_input.py)
    parents: Optional[Parents] = None
    #: where ``construction`` is None because functions of the file made the pipeline and returned
    #: it (``pipe = make_pipe(...)``): how (a Made, see in_caller), or why that cannot be told (str)
    factory: object = None
    #: (the call, the function) that hands a list of these pipelines to the function where the
    #: receiver is used: the arguments they were made with are not visible there (pipe_lists.py)
    handed: Optional[tuple] = None
    #: the code is shared by pipelines of either device (a function handed the outputs of a CPU and
    #: of a GPU pipeline): rules write the form that serves both (rules/batch_select.py)
    any_device: bool = False


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
    #: names of the pipelines given to one iterator with this one: converted together or not at all
    together: set = dataclasses.field(default_factory=set)
    #: (id(function), parameter) -> (the FunctionDef, kind): parameters of functions of the file
    #: that get this pipeline, or its outputs, from a call (see _plan_handoff)
    handoffs: dict = dataclasses.field(default_factory=dict)
    #: ids of the call arguments that hand them over
    handoff_args: set = dataclasses.field(default_factory=set)
    #: id(node) -> (node, rule, site) of the rewrites inside those functions (shared by every
    #: pipeline the function gets: they must come out the same for each)
    shared_rewrites: dict = dataclasses.field(default_factory=dict)
    #: pipelines passed to the same function as this one: converted together or not at all
    share_with: set = dataclasses.field(default_factory=set)
    #: pipelines held in one list with this one that a loop makes in turn (pipe_lists.ClassAlias):
    #: the loop's code serves them all, so they are converted together or not at all
    listed_with: set = dataclasses.field(default_factory=set)
    #: those loops' variables (pipe_lists.ClassAlias)
    class_lists: list = dataclasses.field(default_factory=list)
    #: parameters of functions of the file that get this pipeline function and make pipelines with
    #: it (pipe_params.ParamAlias)
    param_aliases: list = dataclasses.field(default_factory=list)
    #: variables of functions of the file that hold this pipeline or others before one is made
    #: (pipe_choices.ChoiceAlias)
    choice_aliases: list = dataclasses.field(default_factory=list)
    #: the pipelines such a variable may hold besides this one: converted together or not at all
    chosen_with: set = dataclasses.field(default_factory=set)
    #: ChoiceAlias key -> ids of the nodes whose rewrites following that variable planned
    chosen_rewrites: dict = dataclasses.field(default_factory=dict)


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
            if node is not scope and type(node) in _NESTED:  # (by type: isinstance on libcst's classes is slow)
                self.nested.append(node)
                pos = parents.span[id(node)][1]
                continue
            self.nodes.append(node)
            pos += 1
        self._index = None

    def index(self) -> tuple:
        """({name: [positions in nodes of Name nodes spelled so]}, [positions of the other nodes
        _plan_nodes looks at]): each pipeline variable of the scope reads only its own names
        (issue 6: every variable walked every node of its scope)."""
        if self._index is None:
            self._index = _candidate_index(self.nodes)
        return self._index


_NESTED = frozenset({cst.FunctionDef, cst.Lambda, cst.ClassDef})  # (none has subclasses)
# what _plan_nodes plans besides names: by exact type (none of these has subclasses)
_PLANNED = frozenset({cst.Return, cst.Attribute, cst.ListComp, cst.Subscript, cst.Call, cst.IfExp})


def _candidate_index(nodes: list) -> tuple:
    by_name: dict = {}
    others: list = []
    Name = cst.Name
    for i, node in enumerate(nodes):
        tp = type(node)
        if tp is Name:
            by_name.setdefault(node.value, []).append(i)
        elif tp in _PLANNED:
            others.append(i)
    return by_name, others


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
    # kept per node for the conversion (it depends on the subtree alone): asked for every nested
    # function of a scope, for every name tracked there, on every pass (issue 6)
    return cst_walk.remembered(lambda n: _find_bound_in(n, parents), node, key=_find_bound_in)


def _find_bound_in(node, parents: Parents) -> set:
    found = set()
    # (a comprehension's names are its own: one the module tracks, spelled so in a function's
    # comprehension, is no read of the module's)
    for t in parents.find((cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor, cst.AsName, cst.NamedExpr), within=node):
        found |= names_bound(t.name if isinstance(t, cst.AsName) else t.target)
    return found


def _free_in_nested(nodes: _ScopeNodes, names: set, parents: Parents) -> list:
    """Nested scopes that read one of ``names`` from this scope (closures, global readers)."""
    found = []
    for nested in nodes.nested:
        used = cst_walk.remembered(cst_walk.names, nested) & names  # (its Name nodes' values, kept per node)
        if used:
            # names() spells attributes too: `fn.shapes(x)` in a pipeline is no read of a
            # variable `shapes` that holds the pipeline's outputs here
            used &= cst_walk.remembered(cst_walk.variables, nested)
        if any(not _binds(nested, n, parents) for n in used):
            found.append(nested)
    return found


def _kind(node, parents: Parents, state) -> Optional[str]:
    """'pipe', 'outputs' (the tuple pipe.run() returns), 'batch' (one TensorList) or None."""
    if state.attr is not None and isinstance(node, cst.Attribute):
        return "pipe" if m.matches(node, m.Attribute(value=m.Name(state.attr[0]), attr=m.Name(state.attr[1]))) else None
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
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, (cst.Index, cst.Slice)):
        if _kind(node.value, parents, state) == "outputs":
            # an output of the tuple, or a slice of it (`pipe_out[1:]`: a tuple of outputs still)
            return "batch" if isinstance(node.slice[0].slice, cst.Index) else "outputs"
    if isinstance(node, cst.ListComp) and (_host_copies(node, parents, state) is not None or _picked_outputs(node, parents, state)):
        return "outputs"
    if isinstance(node, cst.IfExp):
        # `out[0] if flag else out[1]`: a batch either way (a mix is marked where it is used)
        body = _kind(node.body, parents, state)
        return body if body in ("batch", "outputs") and _kind(node.orelse, parents, state) == body else None
    return None


def _iterating(node, parents: Parents):
    """The loop, comprehension or builtin call that iterates ``node`` (a TensorList), or None."""
    parent = parents.of(node)
    if isinstance(parent, (cst.For, cst.CompFor)) and parent.iter is node:
        return parent if isinstance(parent, cst.For) else parents.of(parent)
    call = parents.of(parent) if isinstance(parent, cst.Arg) and parent.value is node and not parent.keyword else None
    if (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value in _CARRIERS
            and call.func.value not in ("next", "dict") and not _shadowed(call.func.value, parents)):
        return call
    return None


def _samples_read_by_numpy(iterated, parents: Parents, site) -> bool:
    """Is every use of the samples a loop or comprehension over a TensorList gets numpy's
    ``array``/``asarray`` of the sample alone (``[np.asarray(t).shape for t in tl]``)? numpy reads the
    same values from a TensorCPU as from an ndd.Tensor."""
    if isinstance(iterated, cst.For):
        target, within = iterated.target, [iterated.body]
    elif isinstance(iterated, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
        target, within = iterated.for_in.target, [iterated.elt, *(c.search for c in iterated.for_in.ifs)]
    else:
        return False
    if not isinstance(target, cst.Name):
        return False
    uses = [n for w in within for n in parents.find(cst.Name, within=w) if n.value == target.value]
    return bool(uses) and all(_read_by_numpy(n, parents, site) for n in uses)


def _picked_outputs(comp, parents: Parents, state) -> bool:
    """``[out for out in outputs]`` (an ``if`` may drop some): a list of some of the outputs, each
    as it is (DALI's color-space notebook copies slices of the outputs so)."""
    f = comp.for_in
    return (
        isinstance(f, cst.CompFor) and f.inner_for_in is None and f.asynchronous is None
        and isinstance(f.target, cst.Name) and isinstance(comp.elt, cst.Name) and comp.elt.value == f.target.value
        and _kind(f.iter, parents, state) == "outputs"
    )


def _host_copies(comp, parents: Parents, state):
    """``[out.as_cpu() if hasattr(out, "as_cpu") else out for out in outputs]`` (DALI's notebooks,
    written for DALI versions whose TensorListCPU had no as_cpu()) or ``[out.as_cpu() for out in
    outputs]`` over pipeline outputs: a list of the outputs on the host. In DALI 2.4 every
    TensorList has as_cpu(), so the condition is always true and the element is ``out.as_cpu()``.
    Returns (the element, the as_cpu() call), or None."""
    if not (isinstance(comp, cst.ListComp) and isinstance(comp.for_in, cst.CompFor) and comp.for_in.inner_for_in is None
            and not comp.for_in.ifs and comp.for_in.asynchronous is None and isinstance(comp.for_in.target, cst.Name)):
        return None
    if _kind(comp.for_in.iter, parents, state) != "outputs":
        return None
    var = comp.for_in.target.value
    copy = m.Call(func=m.Attribute(value=m.Name(var), attr=m.Name("as_cpu")), args=[])
    elt = comp.elt
    if m.matches(elt, copy):
        return elt, elt
    if (
        isinstance(elt, cst.IfExp)
        and m.matches(elt.body, copy)
        and m.matches(elt.orelse, m.Name(var))
        and m.matches(elt.test, m.Call(func=m.Name("hasattr"), args=[m.Arg(value=m.Name(var), keyword=None),
                                                                     m.Arg(value=m.SimpleString(), keyword=None)]))
        and elt.test.args[1].value.evaluated_value == "as_cpu"
        and not _shadowed("hasattr", parents)
    ):
        return elt, elt.body
    return None


class _HasAsCpu:
    """Rewrites ``hasattr(tl, "as_cpu")`` to ``True``: every TensorList of DALI 2.4 has as_cpu()
    (an ndd.Batch has not: the test would be false, and the copy it guards skipped)."""

    id = "batch-cpu"
    summary = "TensorList.as_cpu() becomes Batch.cpu()"
    receiver = "batch"

    @staticmethod
    def blocker(node, site):
        return None

    @staticmethod
    def needs(node, site):
        return {}

    @staticmethod
    def rewrite(node, receiver, site):
        return cst.Name("True")


def _hasattr_call(node, parents: Parents):
    """The builtin ``hasattr(node, "<name>")`` call whose first argument is ``node``, and the name; or None."""
    arg = parents.of(node)
    call = parents.of(arg) if isinstance(arg, cst.Arg) and arg.value is node and arg.keyword is None else None
    if not (isinstance(call, cst.Call) and m.matches(call.func, m.Name("hasattr")) and len(call.args) == 2
            and call.args[0] is arg and not _shadowed("hasattr", parents)):
        return None
    name = call.args[1].value
    return call, (name.evaluated_value if isinstance(name, cst.SimpleString) else None)


class _TakeBody:
    """Rewrites ``a if hasattr(x, "as_cpu") else x`` to ``a`` (see _host_copies)."""

    id = "batch-cpu"
    summary = "TensorList.as_cpu() becomes Batch.cpu()"

    @staticmethod
    def rewrite(node, receiver, site):
        return node.body


@dataclasses.dataclass
class _State:
    var: str
    #: variables of the same scope holding other converted pipelines: their outputs are tracked too,
    #: since code often reuses names (``images, labels = val.run()`` after the training loop)
    other_pipes: set = dataclasses.field(default_factory=set)
    outputs: set = dataclasses.field(default_factory=set)
    batches: set = dataclasses.field(default_factory=set)
    #: (id(function), parameter) of the functions the pipeline went through to get here
    chain: tuple = ()
    #: (self, attribute) when the pipeline is ``self.<attribute>`` of a class (see _plan_member)
    attr: Optional[tuple] = None
    #: id of the assignment of ``var`` whose stretch alone is planned (see _outputs_while_bound)
    window: Optional[int] = None


def _iterated_outputs(loop: cst.For, parents: Parents, state) -> Optional[tuple]:
    """(the names the loop binds to one output each, the other parts of its target) for ``for i,
    out in enumerate(outputs):`` and ``for name, out in zip(names, outputs):`` (the builtins);
    else None."""
    it, target = loop.iter, loop.target
    if not (
        isinstance(it, cst.Call)
        and m.matches(it.func, m.Name("enumerate") | m.Name("zip"))
        and it.args
        and all(a.keyword is None and not a.star for a in it.args)
        and isinstance(target, (cst.Tuple, cst.List))
        and not any(isinstance(e, cst.StarredElement) for e in target.elements)
        and not _shadowed(it.func.value, parents)
    ):
        return None
    if it.func.value == "enumerate":
        parts = [None, it.args[0].value] if len(it.args) == 1 else []
    else:
        parts = [a.value for a in it.args]
    if len(target.elements) != len(parts):
        return None
    outputs = [p is not None and _kind(p, parents, state) == "outputs" for p in parts]
    if not any(outputs) or not all(isinstance(e.value, cst.Name) for e, out in zip(target.elements, outputs) if out):
        return None
    batches = [e.value.value for e, out in zip(target.elements, outputs) if out]
    return batches, [e.value for e, out in zip(target.elements, outputs) if not out]


#: builtins whose result holds what they are given (``zip(names, outputs)``): outputs given to them
#: leave the names dali-migrate follows, except in the loops of _iterated_outputs
_CARRIERS = frozenset({"zip", "enumerate", "map", "filter", "list", "tuple", "iter", "reversed", "sorted", "next", "dict", "set", "frozenset"})


def _shadowed(builtin: str, parents: Parents) -> bool:
    """Does the file bind the name of a builtin (a def, class, import or assignment of it)?"""
    return any(
        isinstance(parents.of(n), (cst.FunctionDef, cst.ClassDef, cst.ImportAlias, cst.AsName, cst.Param))
        or _is_binding(n, parents)
        for n in parents.names(builtin)
    )


def _track_names(nodes: list, state: _State, parents: Parents) -> list:
    """Grow the sets of names that hold pipeline outputs; return the assignments that break tracking."""
    # (none has subclasses; a comprehension's `for out in outputs` binds one output a time, as a loop does)
    assigns = [n for n in nodes if type(n) is cst.Assign or type(n) is cst.For or type(n) is cst.CompFor]
    changed = True
    while changed:
        changed = False
        for node in assigns:
            value = node.value if isinstance(node, cst.Assign) else node.iter
            kind = _kind(value, parents, state)
            looped = _iterated_outputs(node, parents, state) if isinstance(node, cst.For) else None
            if looped is not None:
                for name in looped[0]:
                    if name not in state.batches:
                        state.batches.add(name)
                        changed = True
                continue
            if kind is None:
                continue
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for target in targets:
                if isinstance(node, (cst.For, cst.CompFor)):
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
        looped = _iterated_outputs(node, parents, state) if isinstance(node, cst.For) else None
        if looped is not None:
            if any({n.value for n in parents.find(cst.Name, within=other)} & tracked for other in looped[1]):
                conflicts.append(node)
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
    pipe_rules.update({("attribute", k): v for k, v in _rules_for(rules, "pipeline-attribute").items()})
    batch_rules = _rules_for(rules, "batch")
    batch_rules.update({("attribute", k): v for k, v in _rules_for(rules, "batch-attribute").items()})
    from dali_migrate import pipe_choices, pipe_lists, pipe_params

    pipe_vars: dict = {}  # id(scope) -> names of variables holding a converted pipeline
    made: dict = {}  # id(scope) -> (scope, {variable: [(pipeline, call)]})
    for name in pipelines:
        for ref in parents.names(name):
            call = parents.of(ref)
            assign = parents.of(call) if isinstance(call, cst.Call) else None
            if isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name):
                scope = parents.scope(assign) or module
                pipe_vars.setdefault(id(scope), set()).add(assign.targets[0].target.value)
                made.setdefault(id(scope), (scope, {}))[1].setdefault(assign.targets[0].target.value, []).append((name, call))

    def make_site(name, call, **more):
        return Site(ndd=ndd, numpy=numpy, pipeline=pipelines[name], construction=call, reader_call=readers.get(name),
                    names=names, taken=set(taken), parents=parents, **more)

    scope_pipes = {key: pipe_lists.scope_sites(scope, parents, calls, make_site) for key, (scope, calls) in made.items()}
    plans = {}
    for name, info in pipelines.items():
        p = Plan()
        plans[name] = p
        p.blockers.extend((info.func, reason) for reason in _read_late(info.func, parents, info.__dict__.get("_read_when_made", ())))
        # The pipeline function itself, then any function that returns what it made (a factory:
        # `def make(): pipe = p(...); pipe.build(); return pipe`), whose callers hold it too.
        # A factory may also be a method called on `self` in its class (a _Method), and the
        # pipeline may be kept in `self.<attribute>` (stores, planned once the callers are known).
        follow = [name]
        stores: dict = {}  # (id(class), attribute) -> (class, attribute, [(Assign, method, made by this pipeline's own call)])
        made_by: dict = {}  # factory -> (its FunctionDef, Made: how what it returns was made) or None
        for callee in follow:
            # a loop's variable holding each pipeline of a list in turn: its calls make this pipeline too
            alias = callee if isinstance(callee, (pipe_lists.ClassAlias, pipe_params.ParamAlias, pipe_choices.ChoiceAlias)) else None
            planned, followed = set(p.rewrites), len(follow)
            constructs = callee == name or alias is not None
            label = callee if isinstance(callee, str) else alias.label if alias else f"self.{callee.name}()"
            refs = _references(callee, parents) if isinstance(callee, str) else callee.refs
            for ref in list(refs):
                parent = parents.of(ref)
                if isinstance(parent, cst.FunctionDef) and parent.name is ref:
                    continue
                if isinstance(parent, cst.ImportAlias) and getattr(info, "imported_from", None):
                    continue  # `from .pipes import P` of a pipeline another file defines (imported_pipelines.py)
                stmt = parents.statement(ref)
                call = parent if isinstance(parent, cst.Call) and parent.func is ref else None
                assign = parents.of(call) if call is not None else None
                if call is not None and not constructs and isinstance(callee, str) and _closes_over(info, callee, parents):
                    # make(args) returning a pipeline defined in it whose graph reads args.crop: the
                    # converted generator reads it at every iteration, after `args.crop = 16` in the
                    # caller (a pipeline function called by make() got the values it passed)
                    changed = changed_in_place.changed_after(call, stmt, parents, f"{callee}(), which makes the pipeline,")
                    if changed is not None:
                        p.blockers.append((stmt, changed))
                        continue
                if isinstance(callee, _Method) and not _on_self_of(ref, callee.cls, parents):
                    p.blockers.append((stmt, f"{label} is used here in a way dali-migrate cannot follow; convert the pipeline and this use by hand"))
                    continue
                if alias is not None and pipe_lists.alias_name_read(ref, parents):
                    continue
                if alias is not None and not (
                    isinstance(assign, cst.ListComp) and assign.elt is call
                    or isinstance(assign, cst.Assign) and assign.value is call and len(assign.targets) == 1
                    and isinstance(assign.targets[0].target, cst.Name)
                ):
                    used = code(stmt).strip().splitlines()[0][:60]
                    p.blockers.append((stmt, f"{label} is used by `{used}`, not called to make pipelines (`pipes = [{alias.name}(...) for ...]`, "
                                             f"`pipe = {alias.name}(...)`) nor asked its __name__: convert by hand"))
                    continue
                if constructs and isinstance(assign, cst.ListComp) and assign.elt is call:
                    # `pipes = [P(...) for i in range(n)]`, one pipeline per GPU
                    _plan_construction(call, info, p, stmt, parents)
                    pipe_lists.plan(assign, make_site(name, call, comp=assign), parents, module, pipe_rules, p)
                    continue
                target = _handoff_target(call, parents) if call is not None else None
                if target is not None:
                    # `show(train_pipe(...))`: the function gets the pipeline object itself.
                    if callee == name:
                        _plan_construction(call, info, p, stmt, parents)
                    site = Site(ndd=ndd, numpy=numpy, pipeline=info, construction=None,
                                reader_call=readers.get(name), names=names, taken=set(taken), parents=parents)
                    _plan_handoff(call, "pipe", target, parents, _State(var=None), site, pipe_rules, batch_rules, p)
                    continue
                if isinstance(assign, cst.Return) and assign.value is call:
                    # `return p(...)`: the function is a factory whose callers get the pipeline.
                    factory, reason = _factory(parents.scope(assign), parents)
                    if factory is None:
                        p.blockers.append((stmt, reason or f"{label} is used here in a way dali-migrate cannot follow; convert the pipeline and this use by hand"))
                        continue
                    if callee == name:
                        _plan_construction(call, info, p, stmt, parents)
                    _note_factory(made_by, factory, parents.scope(assign), _made_at(callee, call, name, made_by), stmt, parents, p)
                    if factory not in follow:
                        follow.append(factory)
                    continue
                if callee == name and call is None:
                    # `benchmark(P, 128)`, whose parameter makes the pipelines, or `pipe_class = P` (or Q)
                    # in a function that then calls `pipe_class(...)`: follow the parameter or the variable
                    if _follow_alias(ref, parents, p, follow, ((pipe_params.param_alias, p.param_aliases),
                                                                (pipe_choices.choice_alias, p.choice_aliases))):
                        continue
                    # `pipe_types = [[P, (0, 999)], ...]` and a loop making each: follow the loop's variable
                    aliases = pipe_lists.class_aliases(ref, parents)
                    if isinstance(aliases, tuple):
                        p.blockers.append(aliases)
                        continue
                    if aliases:
                        for found in aliases:
                            p.blockers.extend(pipe_lists.listed_problems(found, pipelines, parents))
                            p.listed_with |= set(found.listed) - {name}
                            if found not in p.class_lists:
                                p.class_lists.append(found)
                                follow.append(found)
                        continue
                iterator = _iterator_call(call, parents, make_site(name, call)) if call is not None else None
                if iterator is not None and ("iterator", iterator[1]) in pipe_rules:
                    # `DALIGenericIterator([p(...)], ...)`: the iterator gets the pipeline it makes
                    if constructs:
                        _plan_construction(call, info, p, stmt, parents)
                    scope = parents.scope(call) or module
                    site = Site(ndd=ndd, numpy=numpy, pipeline=info, construction=call if constructs else None,
                                reader_call=readers.get(name), names=names, taken=set(taken),
                                scope_pipes=scope_pipes.get(id(scope), {}), parents=parents,
                                factory=None if constructs else _made_at(callee, call, name, made_by))
                    _plan_expr(call, "pipe", parents, _State(var=f"{code(call).strip().splitlines()[0]}"), site,
                               pipe_rules, batch_rules, p)
                    continue
                member = _member_target(assign, call, parents)
                if member is not None:
                    # `self.pipe = p(...)` in a method: every use of `self.pipe` in the class is planned below.
                    if callee == name:
                        _plan_construction(call, info, p, stmt, parents)
                    cls, attr, method = member
                    stores.setdefault((id(cls), attr), (cls, attr, []))[2].append((assign, method, callee == name))
                    continue
                if not (
                    isinstance(assign, cst.Assign)
                    and assign.value is call
                    and len(assign.targets) == 1
                    and isinstance(assign.targets[0].target, cst.Name)
                ):
                    p.blockers.append((stmt, _consumer_hint(call, parents, names) or pipe_lists.factory_list_reason(assign, call, label, stmt)
                                       or _serialized(call, parents, label)
                                       or f"{label} is used here in a way dali-migrate cannot follow (`{one_line_statement(stmt)}`); "
                                          f"convert the pipeline and this use by hand"))
                    continue
                if constructs:
                    _plan_construction(call, info, p, stmt, parents)
                var = assign.targets[0].target.value
                scope = parents.scope(assign) or module
                site = Site(ndd=ndd, numpy=numpy, pipeline=info, construction=call if constructs else None,
                            reader_call=readers.get(name), names=names, taken=set(taken),
                            scope_pipes=scope_pipes.get(id(scope), {}), parents=parents,
                            factory=None if constructs else _made_at(callee, call, name, made_by))
                others = pipe_vars.get(id(scope), set()) - {var}
                for factory in _plan_uses(scope, var, assign, parents, site, pipe_rules, batch_rules, p, others):
                    # `pipe = <call>` ... `return pipe`: the scope is the factory
                    _note_factory(made_by, factory, scope, _made_at(callee, call, name, made_by), stmt, parents, p)
                    if factory not in follow:
                        follow.append(factory)
            if isinstance(callee, pipe_choices.ChoiceAlias):
                p.chosen_rewrites[callee.key] = set(p.rewrites) - planned
                if len(follow) > followed:
                    # what its callers do with a chosen pipeline is planned later, not compared between the choices
                    p.blockers.append((callee.func, f"{callee.func.name.value}() returns the pipeline it makes through `{callee.name}`: "
                                                    f"dali-migrate does not follow a chosen pipeline out of the function; convert by hand"))
        for cls, attr, assigns in stores.values():
            _plan_member(cls, attr, assigns, parents, info, make_site, scope_pipes, pipe_vars, pipe_rules, batch_rules, p)
    _check_handoffs(plans, parents)
    pipe_lists.check_class_lists(plans, parents)
    pipe_params.check_param_aliases(plans, parents)
    pipe_choices.check_choice_aliases(plans, pipelines, parents)
    _check_iterator_classes(plans, parents)
    _share_blockers(plans)
    return plans


def _check_iterator_classes(plans: dict, parents: Parents) -> None:
    """A class of the file derived from a DALI iterator gets the emitted class as its base where
    a call of it is converted: every call of it must then be converted, each to the same base, and
    the pipelines they get are converted together or not at all (else a call left in pipeline mode
    would make the class over a DALI pipeline, or the calls would want different bases)."""
    groups: dict = {}  # id(class) -> (class, {plan name}, {base as written})
    for name, p in plans.items():
        for node_id, (rule, site) in p.rewrites.items():
            if getattr(rule, "receiver", None) != "iterator" or not rule.id.endswith("-base"):
                continue
            node = _node_by_id(node_id, parents)
            cls = parents.of(node)
            if not isinstance(cls, cst.ClassDef):
                continue
            entry = groups.setdefault(id(cls), (cls, set(), set()))
            entry[1].add(name)
            entry[2].add(code(rule.rewrite(node, node, site)))
    for cls, names, bases in groups.values():
        rewritten = set().union(*(plans[n].rewrites for n in names))
        calls = [parents.of(ref) for ref in parents.names(cls.name.value) if ref is not cls.name]
        if any(
            isinstance(node, cst.Call) and iterator_subclasses.own_init(node, parents) and parents.contains(cls, node)
            for node in (_node_by_id(i, parents) for i in rewritten)
        ):
            # the iterator is made by its __init__ over a pipeline it makes (own_init): the
            # class's calls keep their arguments, and each makes its own converted pipeline
            calls = []
        label = f"class {cls.name.value} (derived from the DALI iterator)"
        reason = None
        if len(bases) > 1:
            reason = f"{label} is called over pipelines that need different converted iterators: convert it and its uses by hand"
        elif any(id(call) not in rewritten for call in calls):
            left = next(call for call in calls if id(call) not in rewritten)
            reason = (f"{label} is also called where dali-migrate does not convert the call (`{one_line(left)}`): "
                      f"its base would change under that call; convert it and its uses by hand")
        for n in names:
            if reason:
                plans[n].blockers.append((cls, reason))
            plans[n].together |= names - {n}


def _check_handoffs(plans: dict, parents: Parents) -> None:
    """A function that gets pipelines (or their outputs) from its callers is converted only when
    every call of it passes a converted pipeline's, of one kind, and its body comes out the same
    for each of them."""
    passed = set()
    for p in plans.values():
        passed |= p.handoff_args
    users: dict = {}  # (id(function), parameter) -> [plan]
    for p in plans.values():
        for key in p.handoffs:
            users.setdefault(key, []).append(p)
    for key, group in users.items():
        param = key[1]
        func, kind = group[0].handoffs[key]
        fname = func.name.value
        reasons = []
        if any(q.handoffs[key][1] != kind for q in group):
            reasons.append((func, f"{fname}() gets a pipeline in `{param}` in one call and pipeline outputs in another: convert by hand"))
        for ref in _references(fname, parents):
            call = parents.of(ref)
            if ref is func.name or not isinstance(call, cst.Call):
                continue
            if kind == "outputs" and _in_dead_tuple_branch(call, func, param, parents):
                continue
            resolved = _function_at(call, parents)
            if resolved is not None and resolved is not func:
                continue  # a call of another definition of the name
            arg = _argument_for(call, func, param)
            if arg is None or id(arg) not in passed:
                what = "a pipeline" if kind == "pipe" else "pipeline outputs"
                reasons.append((parents.statement(call), f"{fname}() gets {what} in `{param}` elsewhere, but here something dali-migrate cannot follow: convert {fname}() and its calls by hand"))
        rendered = _shared_forms(group)
        if any(len(forms) > 1 for forms in rendered.values()):
            # one pipeline's outputs on the CPU, another's on the GPU (DALI's brightness/contrast
            # notebook shows both through one display()): the form that serves either device
            for q in group:
                for node_id, (node, rule, site) in list(q.shared_rewrites.items()):
                    either = dataclasses.replace(site, any_device=True)
                    q.shared_rewrites[node_id] = (node, rule, either)
                    if node_id in q.rewrites:
                        q.rewrites[node_id] = (rule, either)
                        q.helpers.update(rule.needs(node, either))
            rendered = _shared_forms(group)
        for node_id, forms in rendered.items():
            if len(forms) > 1:
                node = _node_by_id(node_id, parents)
                reasons.append((parents.statement(node), f"{fname}() would need different code here for the pipelines it gets: convert by hand"))
        # One body for all of them: if one pipeline stays, the function stays as it was.
        names = [n for n, q in plans.items() if q in group]
        for q in group:
            q.blockers.extend(reasons)
        for name, q in plans.items():
            if q in group:
                q.share_with |= set(names) - {name}


def _shared_forms(group: list) -> dict:
    """{id(node): the set of codes the plans of ``group`` would write for that node of a shared function}."""
    rendered: dict = {}
    for q in group:
        for node_id, (node, rule, site) in q.shared_rewrites.items():
            new = rule.rewrite(node, _receiver(node), site)
            rendered.setdefault(node_id, set()).add(None if new is None else code(new))
    return rendered


def _in_dead_tuple_branch(node, func, param: str, parents: Parents) -> bool:
    """Is ``node`` in the body of ``if not isinstance(<param>, tuple):``, a statement of ``func``'s
    own block before anything binds ``param``? The parameter gets pipeline outputs from every call
    (a tuple, from pipe.run() as from next() of the converted generator), so that code never runs,
    and stays as it is (DALI's notebooks: ``return show_result((outputs,))`` for a single output)."""
    stmt = parents.statement(node)
    while stmt is not None and parents.of(stmt) is not func.body:
        if isinstance(stmt, cst.If) and parents.of(stmt) is func.body:
            break
        stmt = parents.statement(parents.of(stmt))
    check = m.UnaryOperation(operator=m.Not(), expression=m.Call(
        func=m.Name("isinstance"), args=[m.Arg(value=m.Name(param), keyword=None), m.Arg(value=m.Name("tuple"), keyword=None)]))
    if not (isinstance(stmt, cst.If) and stmt.orelse is None and m.matches(stmt.test, check)
            and parents.contains(stmt.body, node) and not _shadowed("isinstance", parents) and not _shadowed("tuple", parents)):
        return False
    before = func.body.body[: func.body.body.index(stmt)]
    return not any(param in _bound_in(b, parents) for b in before)


def _follow_alias(ref, parents, p: Plan, follow: list, finders) -> bool:
    """Whether one of ``finders`` ((find, the plan's list of what it found)) takes ``ref`` as a name
    that stands for the pipeline elsewhere: its blocker noted, or the alias followed once."""
    for find, known in finders:
        alias = find(ref, parents)
        if isinstance(alias, tuple):
            p.blockers.append(alias)
            return True
        if alias is not None:
            if alias not in known:
                known.append(alias)
                follow.append(alias)
            return True
    return False


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
                if other is not p and other.blockers and other_name in p.listed_with:
                    p.blockers.append((None, f"is held in one list with pipeline {other_name}, which is not converted "
                                             f"(a loop over the list runs the same code for each of them)"))
                    changed = True
                    break
                if other is not p and other.blockers and _overlap(p.tracked, other.tracked):
                    p.blockers.append((None, f"shares output names with pipeline {other_name}, which is not converted"))
                    changed = True
                    break
                if other is not p and other.blockers and other_name in p.share_with:
                    p.blockers.append((None, f"is passed to a function of this file that also gets pipeline {other_name}, which is not converted"))
                    changed = True
                    break
                if other is not p and other.blockers and other_name in p.chosen_with:
                    p.blockers.append((None, f"is chosen through one variable with pipeline {other_name}, which is not converted "
                                             f"(the code after the choice serves both)"))
                    changed = True
                    break
                if other is not p and other.blockers and other_name in p.together:
                    p.blockers.append((None, f"is given to one iterator with pipeline {other_name}, which is not converted"))
                    changed = True
                    break


def _overlap(ours: set, theirs: set) -> bool:
    """Do two plans follow one name of one scope? Names followed only in the stretch of one
    assignment of a variable (state.window) are that assignment's alone."""
    return any(
        scope == s and name == n and (window is None or w is None or window == w)
        for scope, name, window in ours for s, n, w in theirs
    )


def _closes_over(info: PipelineInfo, factory: str, parents: Parents) -> bool:
    """Is the pipeline function defined in the function ``factory`` (a `with pipe:` graph or a
    nested @pipeline_def), so that its graph may read the factory's parameters themselves?"""
    scope = parents.scope(info.func)
    while scope is not None:
        if isinstance(scope, cst.FunctionDef) and scope.name.value == factory:
            return True
        scope = parents.scope(scope)
    return False


def _plan_construction(call: cst.Call, info: PipelineInfo, p: Plan, stmt, parents: Parents) -> None:
    changed = changed_in_place.changed_after(call, stmt, parents)
    if changed is not None:
        p.blockers.append((stmt, changed))
    params = {
        q.name.value
        for q in [*info.func.params.posonly_params, *info.func.params.params, *info.func.params.kwonly_params]
    }
    # A converted Pipeline subclass whose __init__ takes **kwargs: a keyword it does not name
    # went into that dict, a pipeline setting's name (seed=) too, which the converted function
    # would take as its own setting instead
    class_kwargs = info.func.params.star_kwarg is not None and _synthetic(info.decorator)
    drop = []
    for arg in call.args:
        if class_kwargs and arg.keyword is not None and arg.keyword.value not in params:
            if arg.keyword.value in SETTINGS:
                p.blockers.append((stmt, f"{info.name}(...) gets {arg.keyword.value}=, which goes into its __init__'s "
                                         f"**{info.func.params.star_kwarg.name.value}, where the converted function "
                                         f"would take it as its pipeline setting: convert by hand"))
            continue
        if arg.star:
            p.blockers.append((stmt, f"{info.name}(...) is called with *args/**kwargs: cannot see the pipeline settings, convert by hand"))
        elif arg.keyword is not None and arg.keyword.value == "seed" and m.matches(
            arg.value, m.UnaryOperation(operator=m.Minus(), expression=m.Integer("1"))
        ):
            # -1 is a pipeline's "no fixed seed"; an RNG wants None for that.
            p.none_kwargs.setdefault(id(call), []).append("seed")
        elif arg.keyword is not None and arg.keyword.value == "device_id" and cpu_only_device(arg.value) and (
            "device_id" not in params or info.bound_settings.get("device_id") == "device_id"
        ):
            p.blockers.append((stmt, CPU_ONLY_DEVICE_REASON))
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
        # the variable itself, alone or unpacked; not an attribute or an item of something
        # (`self.pipe = pipe` binds no variable `pipe`: the uses after it are still this pipeline's)
        if isinstance(target, cst.Name):
            return target.value == var
        if isinstance(target, (cst.Tuple, cst.List)):
            return any(binds_var(el.value) for el in target.elements)
        if isinstance(target, cst.StarredElement):
            return binds_var(target.value)
        return False

    # (by exact type: isinstance on libcst's classes goes through abc, and this runs over every
    # node of the scope; none of these types has subclasses)
    bindings = [n for n in own.nodes if type(n) in _TARGET_HOLDERS and binds_var(n.target)]
    nodes = own.nodes
    if len(bindings) != 1:
        nodes = _nodes_while_bound(bindings, assign, own.nodes, parents)
        if nodes is None:
            p.blockers.append((parents.statement(assign), f"`{var}` is assigned more than once: dali-migrate cannot follow which pipeline it holds"))
            return []
    state = _State(var=var, other_pipes=set(others))
    conflicts = _track_names(nodes, state, parents)
    conflicts, away = _copied_out(conflicts, nodes, state, parents)
    for node in conflicts:
        p.blockers.append((parents.statement(node), "a name holding pipeline outputs is also assigned other values here: convert by hand"))
    rebound = nodes is not own.nodes
    if away:
        nodes = [n for n in nodes if id(chain_root(n)) not in away]
    if rebound and (state.outputs or state.batches):
        # Outputs may outlive the next assignment of the variable; by name they cannot be told
        # apart from the outputs of what it holds before or next, unless every read of them sees
        # this binding's (straight-line code: a notebook's cells, each rebinding `pipe` and `out`).
        problems = _outputs_while_bound(var, assign, bindings, state, own, parents)
        if problems:
            p.blockers.extend(problems)
            return []
        state.window = id(assign)
    return _plan_nodes(scope, own, nodes, state, parents, site, pipe_rules, batch_rules, p)


_TARGET_HOLDERS = frozenset({cst.AssignTarget, cst.For, cst.AugAssign, cst.AnnAssign})


def _copied_out(conflicts: list, nodes: list, state, parents: Parents) -> tuple:
    """(the conflicts left, ids of the reads that see a NumPy copy) where a name holding one output
    is bound again to a copy of it made from it (``images = images.as_cpu().as_array()``, as DALI's
    examples do right after ``pipe.run()``): the copy's value is the same in both modes, so the
    reads that see it for certain stay as they are, and those that see the batch are converted.

    Every binding of the name must be a plain assignment statement; each read must see one of them
    for certain (:func:`_owner`), or come after the loop whose body binds it, with the copy last
    there and no binding elsewhere (after the loop: the copy, or, after no round, no value in
    either mode)."""
    away: set = set()
    left = list(conflicts)
    for name in sorted(state.batches):
        copies = [c for c in conflicts if _copy_of(c, name, parents, state)]
        if not copies:
            continue
        refs = [n for n in nodes if isinstance(n, cst.Name) and n.value == name and _is_variable(n, parents)]
        targets = [parents.of(_binding_owner(r, parents)) for r in refs if _is_binding(r, parents)]
        if not all(isinstance(t, cst.AssignTarget) for t in targets) or any(
            isinstance(n, (cst.AugAssign, cst.AnnAssign, cst.NamedExpr, cst.CompFor, cst.AsName, cst.Del))
            and name in {x.value for x in parents.find(cst.Name, within=getattr(n, "target", n))}
            for n in nodes
        ):
            continue
        own_rhs = [c.value for c in copies]
        seen_away, certain = set(), True
        for ref in refs:
            if _is_binding(ref, parents) or any(parents.contains(v, ref) for v in own_rhs):
                continue
            owner = _owner(ref, targets, parents) or _after_loop_owner(ref, targets, parents)
            if owner is None:
                certain = False
                break
            if isinstance(parents.of(owner), cst.Assign) and parents.of(owner) in copies:
                seen_away.add(id(ref))
        if certain:
            away |= seen_away
            left = [c for c in left if c not in copies]
    return left, away


def _binding_owner(ref, parents: Parents):
    cur = ref
    while isinstance(parents.of(cur), (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
        cur = parents.of(cur)
    return cur


def _copy_of(node, name: str, parents: Parents, state) -> bool:
    """Is ``node`` ``name = name.<batch methods>.as_array()`` (or ``np.array(...)`` of such a chain),
    a copy of the output into a NumPy array?"""
    if not (isinstance(node, cst.Assign) and len(node.targets) == 1 and m.matches(node.targets[0].target, m.Name(name))):
        return False
    value = node.value
    if m.matches(value, m.Call(func=m.Attribute(attr=m.Name("as_array")), args=[])):
        chain = value.func.value
    else:
        return False
    while isinstance(chain, cst.Call) and m.matches(chain.func, m.Attribute(attr=m.Name("as_cpu") | m.Name("cpu"))) and not chain.args:
        chain = chain.func.value
    return m.matches(chain, m.Name(name))


def _after_loop_owner(ref, targets: list, parents: Parents):
    """The last of ``targets`` where they are all statements of one loop body, that one is not in
    a branch, and ``ref`` comes after the loop in the loop's own block; else None."""
    stmts = [parents.statement(t) for t in targets]
    bodies = {id(parents.of(st)) for st in stmts}
    if not stmts or len(bodies) != 1:
        return None
    body = parents.of(stmts[0])
    loop = parents.of(body)
    if not (isinstance(body, cst.IndentedBlock) and isinstance(loop, (cst.For, cst.While)) and loop.body is body):
        return None
    if loop.orelse is not None or any(parents.find(cst.Break, within=body)):
        return None  # an early exit could leave the batch's binding last
    last = max(targets, key=lambda t: parents.span[id(t)][0])
    block = parents.of(loop)
    cur = parents.statement(ref)
    while cur is not None and parents.of(cur) is not block:
        cur = parents.statement(parents.of(cur))
    if cur is None or parents.span[id(cur)][0] <= parents.span[id(loop)][0]:
        return None
    return last


def _plan_nodes(scope, own, nodes, state, parents, site, pipe_rules, batch_rules, p: Plan, handoff=None) -> list:
    """Plan every use of the tracked names among ``nodes``; the functions whose callers get the
    pipeline (factories). ``handoff``: the parameter, when ``scope`` is a function that gets the
    pipeline or its outputs from its callers (then nothing of it may leave the function)."""
    var = state.var
    tracked = {var} | state.outputs | state.batches
    tracked.discard(None)
    p.tracked |= {(id(scope), n, state.window) for n in state.outputs | state.batches}
    for nested in _free_in_nested(own, tracked, parents):
        p.blockers.append((nested, f"a nested function uses the pipeline `{var or handoff}` or its outputs: convert by hand"))
    factories = []
    # Only the nodes the loop below can plan, in their order: the scope's names spelled as a
    # tracked name, and nodes of the types it looks at (every other node it passed by).
    by_name, others = own.index() if nodes is own.nodes else _candidate_index(nodes)
    picked = [i for n in tracked for i in by_name.get(n, ())]
    picked.extend(others)
    picked.sort()
    for node in [nodes[i] for i in picked]:
        if handoff is not None and isinstance(node, cst.Return) and node.value is not None:
            if {n.value for n in parents.find(cst.Name, within=node.value)} & tracked:
                p.blockers.append((parents.statement(node), f"{scope.name.value}() returns what it got in `{handoff}` (or its outputs), which dali-migrate does not follow to its callers: convert by hand"))
            continue
        if isinstance(node, cst.Name) and node.value in tracked:
            if _is_binding(node, parents):
                continue
            up = parents.of(node)
            if isinstance(up, cst.Attribute) and up.attr is node or isinstance(up, cst.Arg) and up.keyword is node:
                continue  # `nvidia.dali.pipeline`, `f(pipeline=...)`: not the variable
            parent = parents.of(node)
            if (
                handoff is None
                and node.value == var
                and isinstance(parent, cst.Return)
                and isinstance(scope, cst.FunctionDef)
                and parents.scope(scope) is None
            ):
                factories.append(scope.name.value)  # its callers get the pipeline: follow them
                continue
            if handoff is None and node.value == var and isinstance(parent, cst.Return) and _method_self(scope, parents):
                factory, reason = _factory(scope, parents)
                if factory is None:
                    p.blockers.append((parents.statement(node), reason))
                else:
                    factories.append(factory)
                continue
            _plan_expr(node, _kind(node, parents, state), parents, state, site, pipe_rules, batch_rules, p)
        elif state.attr is not None and isinstance(node, cst.Attribute) and _kind(node, parents, state) == "pipe":
            if not _attr_bound(node, parents):  # its assignments are checked in _plan_member
                _plan_expr(node, "pipe", parents, state, site, pipe_rules, batch_rules, p)
        elif isinstance(node, cst.ListComp) and _host_copies(node, parents, state) is not None:
            elt, copy = _host_copies(node, parents, state)
            cpu_rule = batch_rules.get("as_cpu")
            if cpu_rule is None:
                p.blockers.append((parents.statement(node), "TensorList.as_cpu() needs rule batch-cpu, which is disabled"))
                continue
            _use(cpu_rule, copy, parents.statement(node), site, p)
            if elt is not copy:
                p.rewrites[id(elt)] = (_TakeBody, site)
        elif isinstance(node, (cst.Subscript, cst.Call, cst.ListComp, cst.IfExp)) and _kind(node, parents, state) in ("batch", "outputs"):
            # Subscripts and calls that yield batches (out[0], b.as_cpu()) or outputs (pipe.run())
            # are expressions of their own.
            _plan_expr(node, _kind(node, parents, state), parents, state, site, pipe_rules, batch_rules, p)
    return factories


def _module_function(name: str, parents: Parents):
    """The module-level function ``name`` when it is the file's only binding of the name and every
    other mention of it is a call of it; else None (a decorator, a second definition, an
    assignment, a use as a value: the calls cannot all be seen)."""
    cache = parents.__dict__.setdefault("_module_functions", {})
    if name in cache:
        return cache[name]
    found = None
    defs = [d for d in parents.find(cst.FunctionDef) if d.name.value == name]
    if len(defs) == 1 and parents.scope(defs[0]) is None and not defs[0].decorators and defs[0].asynchronous is None:
        func = defs[0]
        refs = [r for r in _references(name, parents) if r is not func.name]
        if all(isinstance(parents.of(r), cst.Call) and parents.of(r).func is r for r in refs):
            found = func
    cache[name] = found
    return found


def _function_at(call: cst.Call, parents: Parents):
    """The function of the file that ``call`` (of a name) calls: the file's only definition of
    the name (:func:`_module_function`), or, where the file defines it more than once at its top
    level (a notebook cell defining ``examine_output`` again for its own pipeline), the last
    definition above a call made by module-level code, which runs in order; else None."""
    name = call.func.value
    func = _module_function(name, parents)
    if func is not None:
        return func
    defs = _redefined_function(name, parents)
    if not defs or parents.scope(call) is not None:
        return None
    at = parents.span[id(call)][0]
    above = [d for d in defs if parents.span[id(d)][1] <= at]
    return above[-1] if above else None


def _redefined_function(name: str, parents: Parents) -> list:
    """The definitions of ``name``, where there are several and all are plain (undecorated, not
    async) statements of the module's own body, and every other mention of the name is a call of
    it; else []."""
    cache = parents.__dict__.setdefault("_redefined_functions", {})
    if name in cache:
        return cache[name]
    defs = [d for d in parents.find(cst.FunctionDef) if d.name.value == name]
    found = []
    if len(defs) > 1 and all(
        isinstance(parents.of(d), cst.Module) and not d.decorators and d.asynchronous is None for d in defs
    ):
        own = {id(d.name) for d in defs}
        refs = [r for r in _references(name, parents) if id(r) not in own]
        if all(isinstance(parents.of(r), cst.Call) and parents.of(r).func is r for r in refs):
            found = defs
    cache[name] = found
    return found


def _references(name: str, parents: Parents) -> list:
    """The Name nodes spelled ``name`` that may refer to a variable (not ``x.name``, ``f(name=...)``)."""
    found = []
    for ref in parents.names(name):
        parent = parents.of(ref)
        if isinstance(parent, cst.Attribute) and parent.attr is ref:
            continue
        if isinstance(parent, cst.Arg) and parent.keyword is ref:
            continue
        found.append(ref)
    return found


def _bound_param(call: cst.Call, func: cst.FunctionDef, arg: cst.Arg, method: bool = False):
    """The parameter of ``func`` that ``arg`` of ``call`` binds, or None (a star argument before
    it, *args / **kwargs taking it, no such parameter). ``method``: ``call`` is ``self.f(...)``,
    whose object fills the first parameter."""
    params = func.params
    if arg.star:
        return None
    if arg.keyword is not None:
        named = [q for q in [*params.params, *params.kwonly_params] if q.name.value == arg.keyword.value]
        if method and named and named[0] is [*params.posonly_params, *params.params][0]:
            return None  # `self` given twice: a TypeError
        return named[0] if named else None
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in positional[: positional.index(arg)]):
        return None
    i = positional.index(arg)
    every = [*params.posonly_params, *params.params][1 if method else 0 :]
    return every[i] if i < len(every) else None


def _argument_for(call: cst.Call, func: cst.FunctionDef, param: str):
    """The argument ``call`` gives ``func``'s parameter ``param``; None when it gives none or
    cannot be told (star arguments)."""
    if any(a.star for a in call.args):
        return None
    for arg in call.args:
        bound = _bound_param(call, func, arg)
        if bound is not None and bound.name.value == param:
            return arg
    return None


# -- pipelines that functions of the file make and return ---------------------------------------
#
# `def create_pipeline(batch_size, data_dir, ...): pipe = p(...) (or a `with pipe:` graph); return
# pipe` and its caller's `pipe = create_pipeline(...)`: the rules that need the arguments the
# pipeline was made with (an iterator's batch size and reader, `pipe.epoch_size()`) get them from
# the factory's own call of the pipeline, each of its parameters replaced by what the caller's
# call gives it, as Python binds them (positional, keyword, defaults).


@dataclasses.dataclass(frozen=True, eq=False)
class Made:
    """How a pipeline that functions of the file make and return reaches a variable: ``construction``
    is the pipeline's own call, in the first function of ``levels``; ``levels`` holds (function,
    its call, whether that is a method called on ``self``), from that function out to the call
    whose value the variable holds."""

    construction: cst.Call
    levels: tuple


def _made_at(callee, call: cst.Call, name: str, made_by: dict):
    """How the pipeline that ``call`` of ``callee`` (the pipeline ``name`` itself, or a factory of
    it) gives was made: a Made, or why that cannot be told (str)."""
    if callee == name:
        return Made(construction=call, levels=())
    found = made_by.get(callee, "dali-migrate cannot tell how it makes the pipeline")
    if isinstance(found, str):
        return found
    func, inner = found
    return Made(construction=inner.construction, levels=(*inner.levels, (func, call, isinstance(callee, _Method))))


def _note_factory(made_by: dict, factory, func, made, stmt, parents: Parents, p: Plan) -> None:
    """``func`` (followed as ``factory``) returns the pipeline ``made`` says how it was made (a
    Made, or a reason). Every call of it gives that one only where it has one ``return`` and is
    no generator; otherwise its callers' sites get the reason."""
    own = _scope_nodes(func, parents)
    fname = func.name.value
    returns = sum(isinstance(n, cst.Return) for n in own.nodes)
    if returns != 1:
        made = f"{fname}() has {returns} return statements (which pipeline a call of it gives cannot be told)"
    elif any(isinstance(n, (cst.Yield, cst.Await)) for n in own.nodes):
        made = f"{fname}() is a generator or a coroutine"
    elif isinstance(made, str):
        made = f"{fname}() gets it from another function, and {made}"
    if factory in made_by:
        known = made_by[factory]
        if not isinstance(known, str) and (isinstance(made, str) or not _same_made(known[1], made)):
            # callers planned already have the first way: none of them is right for certain
            p.blockers.append((stmt, f"{fname}() returns pipelines made in more than one way: convert by hand"))
            made_by[factory] = f"{fname}() returns pipelines made in more than one way"
        return
    made_by[factory] = made if isinstance(made, str) else (func, made)


def _same_made(a: Made, b: Made) -> bool:
    return a.construction is b.construction and len(a.levels) == len(b.levels) and all(
        x[0] is y[0] and x[1] is y[1] for x, y in zip(a.levels, b.levels)
    )


def bound_arguments(call: cst.Call, func: cst.FunctionDef, method: bool = False):
    """{parameter: (expression, whether it is the parameter's default)} as Python binds ``call``'s
    arguments to ``func``'s parameters (``method``: ``self.f(...)``, whose object is the first), or
    why that cannot be told (str): star arguments, an argument that fills no parameter (one that
    *args / **kwargs would take, or a TypeError)."""
    params = func.params
    fname = func.name.value
    if any(a.star for a in call.args):
        return f"{fname}() is called with *args/**kwargs"
    found: dict = {}
    positional = [*params.posonly_params, *params.params]
    if method:
        found[positional[0].name.value] = (call.func.value, False)
    for arg in call.args:
        param = _bound_param(call, func, arg, method)
        if param is None or param.name.value in found:
            return f"an argument of this {fname}() call fills none of its named parameters"
        found[param.name.value] = (arg.value, False)
    for q in [*positional, *params.kwonly_params]:
        if q.name.value not in found and q.default is not None:
            found[q.name.value] = (q.default, True)
    return found


class _NotFollowed(CannotConvert):
    pass


class _Variables(cst.CSTTransformer):
    """Replaces each variable an expression reads (not ``a.x``'s ``x``, not ``f(x=...)``'s keyword)
    by what ``fn`` gives for its name (None: kept); a replacement that is not an atom is put in
    parentheses where it is part of a larger expression."""

    def __init__(self, fn, root):
        self.fn, self.root, self.skip = fn, root, set()

    def visit_Attribute(self, node):
        self.skip.add(id(node.attr))

    def visit_Arg(self, node):
        if node.keyword is not None:
            self.skip.add(id(node.keyword))

    def on_visit(self, node):
        if isinstance(node, (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.NamedExpr)):
            raise _NotFollowed(f"`{code(self.root).strip()}` binds names of its own (a lambda, a comprehension, :=)")
        return super().on_visit(node)

    def leave_Name(self, original, updated):
        if id(original) in self.skip:
            return updated
        new = self.fn(original.value)
        if new is None:
            return updated
        atom = (cst.Name, cst.Attribute, cst.Subscript, cst.Call, cst.Integer, cst.Float, cst.SimpleString, cst.List, cst.Tuple, cst.Dict)
        if original is not self.root and not isinstance(new, atom) and not new.lpar:
            new = new.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return new


def map_variables(expr, fn):
    """``expr`` with its variables replaced by ``fn(name)`` (an expression, or None to keep it)."""
    return expr.visit(_Variables(fn, expr))


_BINDERS = frozenset({cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr, cst.AsName, cst.Del})


def _own_bindings(scope, parents: Parents) -> list:
    """(name, position) of each binding the scope makes itself (not its nested scopes): its
    parameters (position -1), assignments and loop targets, imports, defs and classes, and the
    names it declares global or nonlocal (position -2: anywhere).

    Kept per scope for the conversion (the module's is asked once per name it reads): callers
    must not change the list."""
    cache = parents.__dict__.setdefault("_own_bindings", {})
    hit = cache.get(id(scope))
    if hit is not None and hit[0] is scope:
        return hit[1]
    found = []
    if isinstance(scope, (cst.FunctionDef, cst.Lambda)):
        params = scope.params
        every = [*params.posonly_params, *params.params, *params.kwonly_params]
        every += [q for q in (params.star_arg, params.star_kwarg) if isinstance(q, cst.Param)]
        found += [(q.name.value, -1) for q in every]
    own = _scope_nodes(scope, parents)
    for node in own.nodes:
        tp = type(node)  # (exact types: none has subclasses, and isinstance on them is slow)
        if tp in _BINDERS:
            target = node.name if tp is cst.AsName else node.target
            if not isinstance(target, (cst.Attribute, cst.Subscript)):
                found += [(n, parents.span[id(node)][0]) for n in cst_walk.variables(target)]
        elif tp is cst.ImportAlias:
            bound = node.asname.name if node.asname is not None else node.name
            found.append((code(bound).split(".")[0], parents.span[id(node)][0]))
        elif tp is cst.Global or tp is cst.Nonlocal:
            found += [(n.name.value, -2) for n in node.names]
    found += [(n.name.value, parents.span[id(n)][0]) for n in own.nested if isinstance(n, (cst.FunctionDef, cst.ClassDef))]
    cache[id(scope)] = (scope, found)
    return found


def in_caller(made: Made, expr, parents: Parents, at_module: bool = False):
    """``expr``, written in the function that makes the pipeline (``at_module``: at module level,
    a module-level pipeline function's decorator or defaults), as the code holding the pipeline
    (the scope of ``made``'s last call) can evaluate it there, or why it cannot (str).

    Each function's parameters become what its call gives them: an argument that gives the same
    value when evaluated again (rules/pipe_epoch_size.repeatable) and that the caller does not
    assign after the call, or a literal default. A name the function computes itself cannot be
    followed; a global must mean the same where the function is called."""
    from dali_migrate.rules.pipe_epoch_size import repeatable

    try:
        if at_module:
            return map_variables(expr, lambda n: _global_in_caller(n, made.levels[-1], parents))
        for func, call, method in made.levels:
            expr = _through(expr, func, call, method, parents, repeatable)
        return expr
    except _NotFollowed as e:
        return str(e)


def _caller_bindings(call, parents: Parents) -> tuple:
    """(the names the scope of ``call`` binds itself, those it binds after the call); at module
    level the first is empty: there a function's globals are the caller's names."""
    scope = parents.scope(call)
    bindings = _own_bindings(scope if scope is not None else parents.order[0], parents)
    end = parents.span[id(call)][1]
    later = {n for n, at in bindings if at >= end or at == -2}
    return ({n for n, _ in bindings} if scope is not None else set()), later


def _global_in_caller(name: str, level: tuple, parents: Parents):
    func, call, _ = level
    bound, later = _caller_bindings(call, parents)
    if name in bound or name in later:
        raise _NotFollowed(f"`{name}`, which the pipeline is made with, names something else where {func.name.value}() is called")
    return None


def _module_constant_before(name: str, func: cst.FunctionDef, parents: Parents) -> bool:
    """Is ``name`` a module variable bound once in the whole file, by a top-level ``name = ...``
    before ``func`` (so a default of ``func`` naming it and the name read later are one value)?"""
    from dali_migrate.rules.external_source import _binding_count

    module = parents.order[0]
    if not isinstance(module, cst.Module) or _binding_count(module, name) != 1:
        return False
    start = parents.span[id(func)][0]
    for stmt in module.body:
        if parents.span[id(stmt)][0] >= start:
            return False
        if (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign)
                and len(stmt.body[0].targets) == 1 and isinstance(stmt.body[0].targets[0].target, cst.Name)
                and stmt.body[0].targets[0].target.value == name):
            return True
    return False


def _through(expr, func: cst.FunctionDef, call: cst.Call, method: bool, parents: Parents, repeatable):
    """``expr`` of ``func``'s scope as the scope of ``call`` (a call of ``func``) evaluates it."""
    fname = func.name.value
    args = bound_arguments(call, func, method)
    if isinstance(args, str):
        raise _NotFollowed(args)
    own = _own_bindings(func, parents)
    params = {q.name.value for q in [*func.params.posonly_params, *func.params.params, *func.params.kwonly_params]}
    stars = {q.name.value for q in (func.params.star_arg, func.params.star_kwarg) if isinstance(q, cst.Param)}
    local = {n for n, at in own if at != -1 or n in stars}
    bound, later = _caller_bindings(call, parents)

    def one(name: str):
        if name in params:
            if name in local:
                raise _NotFollowed(f"{fname}() assigns its parameter `{name}`, which the pipeline is made with")
            if name not in args:
                raise _NotFollowed(f"{fname}()'s parameter `{name}`, which the pipeline is made with, gets no value here")
            value, default = args[name]
            if default:
                if _literal(value):
                    return value
                if isinstance(value, cst.Name) and value.value not in bound | later and _module_constant_before(value.value, func, parents):
                    return value  # `num_shards=SHARDS`: the module's constant, the same where the call is
                raise _NotFollowed(f"the default of {fname}()'s parameter `{name}` is not a literal")
            if not repeatable(value):
                raise _NotFollowed(f"{fname}() gets `{code(value).strip()}` for `{name}`, an expression that would run twice")
            changed = sorted(cst_walk.variables(value) & later)
            if changed:
                raise _NotFollowed(f"`{changed[0]}`, given to {fname}(), is assigned again after the call")
            return value
        if name in local:
            from dali_migrate.shared_setup import asked_in

            # the rank or world size it asks the process for: asked again where the pipeline is used
            value = asked_in(func, name, parents)
            if value is not None and not cst_walk.variables(value) & (bound | later):
                return value
            raise _NotFollowed(f"`{name}`, which the pipeline is made with, is computed inside {fname}()")
        if name in bound or name in later:
            raise _NotFollowed(f"`{name}`, which the pipeline is made with, names something else where {fname}() is called")
        return None

    return map_variables(expr, one)


def _literal(expr) -> bool:
    """A value written out: the same object, or an equal one, wherever it is evaluated."""
    if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(expr, cst.Name):
        return expr.value in ("True", "False", "None")
    if isinstance(expr, cst.UnaryOperation):
        return isinstance(expr.operator, (cst.Minus, cst.Plus)) and _literal(expr.expression)
    if isinstance(expr, (cst.Tuple, cst.List)):
        return all(isinstance(el, cst.Element) and _literal(el.value) for el in expr.elements)
    return False


def _read_late(func: cst.FunctionDef, parents: Parents, read_when_made=()) -> list:
    """Why a pipeline function defined inside another function (a ``with pipe:`` graph there, made
    a function of its own) would not see the values its graph saw: it reads the enclosing
    function's names when the generator runs, the pipeline read them when its graph was defined.
    So a name it reads must not be bound again, nor changed in place, after the definition.
    ``read_when_made``: module variables the converted function reads when it is called, as the
    pipeline did (rules/pipeline_def.py's eager form), not when its generator runs."""
    outer = parents.scope(func)
    if outer is None and id(func) in parents.span:
        # a module-level pipeline: the pipeline read module variables when it was made, the
        # converted generator reads them when it first runs; one bound again anywhere in the module
        # (or declared global) may hold another value by then
        reads = cst_walk.variables(func.body) - {n for n, _ in _own_bindings(func, parents)} - set(read_when_made)
        if not reads:
            return []
        start = parents.span[id(func)][0]
        # (a function that declares a name global but never binds it, `global args` before
        # `args.gpu = 0`, changes nothing the module binds)
        declared = {n.name.value for node in parents.find(cst.Global) for n in node.names
                    if _binds_declared(n.name.value, node, parents)}
        # A star import binds names nobody lists. One at the top of the module, before the def,
        # binds them once, before the pipeline can be made, like any import there; one after it,
        # or in a function or a loop, may bind any name the graph reads again.
        stars = [n for n in parents.find(cst.ImportFrom) if isinstance(n.names, cst.ImportStar)]
        late_star = next((n for n in stars if parents.span[id(n)][0] >= start or parents.scope(n) is not None
                          or any(isinstance(a, (cst.For, cst.While)) for a in _ancestors(n, parents))), None)
        if late_star is not None:
            return [f"`{code(late_star)}` comes after the pipeline function (or runs again) and may bind any "
                    f"name its graph reads (`{sorted(reads)[0]}`, ...): the pipeline read them when it was made, "
                    f"the converted generator would read them when it first runs; convert by hand"]

        def late(name) -> bool:
            # bound where it can run again after the pipeline is made: by a function (`global`), in
            # a loop at module level, or by a second statement after the def (which comes before any
            # call of it; a name bound once runs its binding once, while the module loads); the same
            # import written again (`import nvidia.dali.fn as fn` twice) binds the same module
            stmts, in_loop = module_bindings(name, parents)
            if name in declared:
                return not _set_once_before(name, func, stmts, parents)
            if in_loop:
                return True
            if len(stmts) < 2 or all(pos < start for pos, _ in stmts):
                return False
            # (a notebook binding `num_classes = 10` in two cells binds the same value twice)
            return not _one_value(name, stmts, parents)

        return [f"the graph reads `{n}`, a module variable that is assigned again after the pipeline function is "
                f"defined (or declared global): the pipeline read it when it was made, the converted generator "
                f"would read it when it first runs; convert by hand"
                for n in sorted(reads) if late(n)]
    if not isinstance(outer, cst.FunctionDef):
        return []
    from dali_migrate.legacy import _mutated

    reads = cst_walk.variables(func.body) - {n for n, _ in _own_bindings(func, parents)}
    end = parents.span[id(func)][1]
    late = sorted({n for n, at in _own_bindings(outer, parents) if (at >= end or at == -2) and n in reads})
    for node in _scope_nodes(outer, parents).nodes:
        if isinstance(node, cst.SimpleStatementLine) and parents.span[id(node)][0] >= end:
            late += sorted(_mutated(node) & reads - set(late))
    return [f"the graph reads `{n}`, which {outer.name.value}() assigns or changes after the graph is defined: the converted "
            f"generator would read it when it runs; convert by hand" for n in late]


def _ancestors(node, parents: Parents):
    cur = parents.of(node)
    while cur is not None:
        yield cur
        cur = parents.of(cur)


def _binds_declared(name: str, declaration: cst.Global, parents: Parents) -> bool:
    """Does the scope of ``declaration`` (``global name``) bind ``name`` (assign, delete, import,
    define it)? A scope that only reads it, or sets its attributes, binds nothing."""
    scope = parents.scope(declaration)
    if scope is None:
        return True  # (`global` at module level: nothing to tell apart, kept as declared)
    if any(n == name and pos >= 0 for n, pos in _own_bindings(scope, parents)):
        return True
    return any(name in cst_walk.variables(d.target) for d in parents.find(cst.Del, within=scope))


def _set_once_before(name: str, func: cst.FunctionDef, stmts: list, parents: Parents) -> bool:
    """Is the module variable ``name``, which a function declares global, set before the module-level
    pipeline ``func`` is made and never again while it lives? The training-script shape

        def main():
            global args
            args = parser.parse_args()
            ...
            pipe = Pipe(...)   # its graph reads args
        if __name__ == "__main__":
            main()

    One function, ``main``, declares it global; binds it only in statements of its own body's top
    level, all before every place the pipeline is made, and every place is in ``main`` itself
    (not a nested function); ``main`` is called once, by a module-level statement outside any loop,
    and named nowhere else; the module binds ``name`` only before that call. Then every binding
    runs once, before any pipeline exists, and the converted generator reads what the pipeline read."""
    holders = {id(parents.scope(g)): parents.scope(g) for g in parents.find(cst.Global)
               if any(n.name.value == name for n in g.names)}
    if len(holders) != 1:
        return False
    (main,) = holders.values()
    if not isinstance(main, cst.FunctionDef) or parents.scope(main) is not None or not isinstance(main.body, cst.IndentedBlock):
        return False
    if main.asynchronous is not None or any(True for _ in parents.find((cst.Yield, cst.Await), within=main)):
        return False
    if any(name in cst_walk.variables(d.target) for d in parents.find(cst.Del)):
        return False  # (unbound later: the generator would raise NameError where the pipeline ran)
    top = {id(stmt): parents.span[id(stmt)] for stmt in main.body.body}
    bound_at = [pos for n, pos in _own_bindings(main, parents) if n == name and pos >= 0]
    if not bound_at:
        return False
    last_end = 0
    for pos in bound_at:
        stmt = parents.statement(parents.order[pos])
        if id(stmt) not in top:
            return False  # in a loop, a branch, a with or try: not once, or not surely before
        last_end = max(last_end, top[id(stmt)][1])
    made = [n for n in parents.names(func.name.value) if parents.scope(n) is not func]
    if not made:
        return False
    for node in made:
        call = parents.of(node)
        if not (isinstance(call, cst.Call) and call.func is node) or parents.scope(call) is not main:
            return False
        if parents.span[id(call)][0] < last_end:
            return False
    uses = [n for n in parents.names(main.name.value) if n is not main.name]
    if len(uses) != 1:
        return False
    call = parents.of(uses[0])
    if not (isinstance(call, cst.Call) and call.func is uses[0]) or parents.scope(call) is not None:
        return False
    cur = parents.of(call)
    while cur is not None:
        if isinstance(cur, (cst.For, cst.While, cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return False
        cur = parents.of(cur)
    called = parents.span[id(call)][0]
    return all(pos < called for pos, _ in stmts)


def _one_value(name: str, stmts: list, parents: Parents) -> bool:
    """Do the module-level statements ``stmts`` (module_bindings) all bind ``name`` to the same
    literal or the same import? Kept per name for the conversion (asked for each pipeline)."""
    cache = parents.__dict__.setdefault("_one_value", {})
    if name not in cache:
        values = {_import_target(stmt, name) or _literal_value(stmt, name) for _, stmt in stmts}
        cache[name] = len(values) == 1 and None not in values
    return cache[name]


def _import_target(stmt, name: str):
    """What the import statement ``stmt`` binds ``name`` to (``nvidia.dali.fn`` for ``import
    nvidia.dali.fn as fn`` and for ``from nvidia.dali import fn``: where both run, the attribute is
    the submodule), else None."""
    for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
        if isinstance(small, cst.Import):
            for alias in small.names:
                bound = alias.asname.name.value if alias.asname is not None else code(alias.name).split(".")[0]
                if bound == name:
                    return code(alias.name) if alias.asname is not None else code(alias.name).split(".")[0]
        elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar) and not small.relative:
            for alias in small.names:
                bound = alias.asname.name.value if alias.asname is not None else code(alias.name)
                if bound == name and small.module is not None:
                    return f"{code(small.module)}.{code(alias.name)}"
    return None


def _literal_value(stmt, name: str):
    """The literal ``stmt`` (``name = 10``) binds ``name`` to, as code, else None."""
    body = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ()
    if len(body) == 1 and isinstance(body[0], cst.Assign) and len(body[0].targets) == 1:
        target, value = body[0].targets[0].target, body[0].value
        if isinstance(target, cst.Name) and target.value == name and (
                isinstance(value, (cst.Integer, cst.Float, cst.SimpleString))
                or (isinstance(value, cst.Name) and value.value in ("True", "False", "None"))):
            return "=" + code(value)
    return None


def module_bindings(name: str, parents: Parents) -> tuple:
    """([(position, statement)] of the module-level statements that bind ``name``, one entry per
    statement (`import a.b as b` binds through its alias and its `as` name), whether one of them
    is inside a loop). Kept per name for the conversion: callers must not change the list."""
    cache = parents.__dict__.setdefault("_module_bindings", {})
    if name in cache:
        return cache[name]
    stmts: dict = {}
    in_loop = False
    for n, pos in _own_bindings(parents.order[0], parents):
        if n != name or pos < 0:
            continue
        node = parents.order[pos]
        cur = node  # (a `for` statement binds its own target: it counts as in a loop)
        while cur is not None and not in_loop:
            in_loop = isinstance(cur, (cst.For, cst.While))
            cur = parents.of(cur)
        stmt = parents.statement(node)
        stmts.setdefault(id(stmt), (pos, stmt))
    found = cache[name] = (list(stmts.values()), in_loop)
    return found


def _call_given(node, parents: Parents) -> Optional[cst.Call]:
    """The call ``node`` is an argument of (``f(node)``, ``f(x=node)``), else None."""
    arg = parents.of(node)
    call = parents.of(arg) if isinstance(arg, cst.Arg) and arg.value is node else None
    return call if isinstance(call, cst.Call) else None


def _handoff_target(node, parents: Parents):
    """(call, function, parameter) when ``node`` is an argument of a call of a function defined
    once at the top of this file (``run_and_print(pipe)``), else None."""
    call = _call_given(node, parents)
    if not (call is not None and isinstance(call.func, cst.Name)):
        return None
    arg = parents.of(node)
    func = _function_at(call, parents)
    if func is None:
        return None
    param = _bound_param(call, func, arg)
    if param is None:
        return None
    return call, func, param


def _plan_handoff(node, kind, target, parents, state, site, pipe_rules, batch_rules, p: Plan) -> None:
    """The pipeline (kind "pipe"), its outputs ("outputs") or one output ("batch") is passed to a
    function of this file: its uses of the parameter are planned as those of a local variable.

    The calls of the function are checked in :func:`_check_handoffs` (every one must pass what
    this parameter gets here); the function body is shared by every pipeline passed to it, so
    they convert together or not at all and its rewrites must be the same for each."""
    call, func, param = target
    name = param.name.value
    stmt = parents.statement(node)
    key = (id(func), name)
    p.handoff_args.add(id(parents.of(node)))
    if key in state.chain:
        p.blockers.append((stmt, f"{func.name.value}() gets the pipeline again through a recursive call: convert by hand"))
        return
    if key in p.handoffs:
        if p.handoffs[key][1] != kind:
            p.blockers.append((stmt, f"{func.name.value}() gets both a pipeline and its outputs in `{name}`: convert by hand"))
        return
    p.handoffs[key] = (func, kind)
    own = _scope_nodes(func, parents)
    inner = _State(var=name if kind == "pipe" else None, chain=(*state.chain, key))
    if kind == "outputs":
        inner.outputs.add(name)
    if _rebinds(own, name, parents) and not (kind == "outputs" and _only_copied_to_host(own, name, parents, inner)):
        p.blockers.append((func, f"{func.name.value}() assigns its parameter `{name}`, which gets a pipeline (or its outputs): dali-migrate cannot follow it, convert by hand"))
        return
    if kind == "outputs":
        inner.outputs.add(name)
    elif kind == "batch":
        inner.batches.add(name)
    nodes = own.nodes
    if kind == "outputs":
        # `if not isinstance(outputs, tuple): ...` never runs on pipeline outputs: left as it is
        dead = [st for st in func.body.body if isinstance(st, cst.If) and _in_dead_tuple_branch(st.body, func, name, parents)]
        nodes = [n for n in nodes if not any(parents.contains(st.body, n) for st in dead)]
    for bad in _track_names(nodes, inner, parents):
        p.blockers.append((parents.statement(bad), "a name holding pipeline outputs is also assigned other values here: convert by hand"))
    # Another function's body cannot see the arguments the pipeline was made with.
    inner_site = dataclasses.replace(site, construction=None, factory=None)
    before = dict(p.rewrites)
    _plan_nodes(func, own, nodes, inner, parents, inner_site, pipe_rules, batch_rules, p, handoff=name)
    for node_id, (rule, used_site) in p.rewrites.items():
        if node_id not in before:
            p.shared_rewrites[node_id] = (_node_by_id(node_id, parents), rule, used_site)


def _only_copied_to_host(own: _ScopeNodes, name: str, parents: Parents, state) -> bool:
    """Is every binding of ``name`` in the function ``name = [<host copy> for x in name]``
    (_host_copies), a statement of the function's own block?"""
    found = False
    for node in own.nodes:
        if isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr, cst.Del, cst.AsName, cst.Global, cst.Nonlocal)):
            target = getattr(node, "target", None) or getattr(node, "name", None)
            if target is None or any(n.value == name for n in parents.find(cst.Name, within=target)) or isinstance(node, (cst.Global, cst.Nonlocal)):
                return False
        if isinstance(node, cst.AssignTarget) and any(n.value == name for n in parents.find(cst.Name, within=node.target)):
            assign = parents.of(node)
            if not (m.matches(node.target, m.Name(name)) and len(assign.targets) == 1
                    and parents.of(parents.statement(assign)) is own.scope.body
                    and _host_copies(assign.value, parents, state) is not None):
                return False
            found = True
    return found


def _rebinds(own: _ScopeNodes, name: str, parents: Parents) -> bool:
    """Does the scope itself (not a nested one) assign ``name``, delete it or declare it global?"""
    for node in own.nodes:
        if isinstance(node, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr, cst.Del)):
            target = node.target
        elif isinstance(node, cst.AsName):
            target = node.name
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            if any(n.name.value == name for n in node.names):
                return True
            continue
        else:
            continue
        if name in names_bound(target):
            return True
    return False


def _node_by_id(node_id: int, parents: Parents):
    table = parents.__dict__.get("_by_id")
    if table is None:
        table = parents.__dict__["_by_id"] = {id(n): n for n in parents.order}
    return table[node_id]


def _nodes_while_bound(bindings: list, assign, nodes: list, parents: Parents) -> Optional[list]:
    """The scope's nodes from ``assign`` up to the variable's next assignment, when every
    assignment of it is a plain ``var = ...`` statement of one block (straight-line code, so each
    use sees the last assignment above it: `pipe = train(...)` ... `pipe = val(...)`), or of
    several blocks where each use sees one assignment for certain (:func:`_owner`: a notebook's
    `pipe = make(...)` in one cell, then in the body of a loop over the cases); else None."""
    stmts = []
    for b in bindings:
        owner = parents.of(b)
        stmt = parents.statement(b)
        if not (isinstance(b, cst.AssignTarget) and isinstance(owner, cst.Assign) and len(owner.targets) == 1):
            return None
        stmts.append(stmt)
    blocks = {id(parents.of(s)) for s in stmts}
    if parents.statement(assign) not in stmts:
        return None
    starts = sorted(parents.span[id(s)][0] for s in stmts)
    var = bindings[0].target.value if isinstance(bindings[0].target, cst.Name) else None
    if var is None or any(
        isinstance(n, cst.Name) and n.value == var and parents.span[id(n)][0] < starts[0] for n in nodes
    ):
        return None  # a use above the first assignment (in a loop: the last one's value)
    if len(blocks) != 1 and any(
        _owner(n, bindings, parents) is None
        for n in nodes
        if isinstance(n, cst.Name) and n.value == var and _is_variable(n, parents) and not _is_binding(n, parents)
    ):
        return None
    lo = parents.span[id(parents.statement(assign))][0]
    later = [x for x in starts if x > lo]
    hi = later[0] if later else len(parents.order)
    # The assignment's own value (`pipe = make(pipe)`) reads the previous binding: start after it.
    lo = parents.span[id(assign.value)][1] if isinstance(assign, cst.Assign) else lo
    return [n for n in nodes if lo <= parents.span[id(n)][0] < hi]


def _owner(ref: cst.Name, bindings: list, parents: Parents):
    """The assignment (of ``bindings``, AssignTargets) whose value ``ref`` reads for certain: the
    last one above it that always runs before it, with no other one that could run in between
    (above it after that one, or in a loop around ``ref`` that does not hold that one); else None."""
    span = parents.span
    at = span[id(ref)][0]
    before = [b for b in bindings if span[id(b)][0] < at and _always_before(b.target, ref, parents)]
    if not before:
        return None
    own = max(before, key=lambda b: span[id(b)][0])
    if any(span[id(own)][0] < span[id(c)][0] < at for c in bindings):
        return None
    home = parents.statement(own)
    loop = parents.of(ref)
    while loop is not None:
        if isinstance(loop, (cst.For, cst.While)) and not parents.contains(loop, home) and any(
            c is not own and parents.contains(loop, c) for c in bindings
        ):
            return None  # `pipe.run()` before `pipe = ...` in a loop: the last round's
        loop = parents.of(loop)
    return own


def _outputs_while_bound(var, assign, bindings, state, own: _ScopeNodes, parents: Parents) -> list:
    """Blockers, empty where every read of the names holding this binding's outputs (``out =
    pipe.run()``) sees this binding's, so that planning them by name, within the nodes of
    :func:`_nodes_while_bound`, is exact.

    The assignments of ``var`` must be statements of the scope's own block (run once each, in
    order: a notebook's cells, a function's body). Then a read between this assignment and the
    next one must come after a binding of the name made there that always runs before it, and a
    read after the next one after a binding made after it."""
    stmt = parents.statement(assign)
    top = own.scope.body if isinstance(own.scope, cst.FunctionDef) else own.scope
    if parents.of(stmt) is not top:
        return [(stmt, f"`{var}` is assigned more than once and its outputs are kept in variables: convert by hand")]
    span = parents.span
    lo = span[id(stmt)][0]
    later = [span[id(parents.statement(b))][0] for b in bindings if span[id(parents.statement(b))][0] > lo]
    hi = min(later, default=len(parents.order))
    problems = []
    for name in sorted(state.outputs | state.batches):
        refs = [n for n in own.nodes if isinstance(n, cst.Name) and n.value == name and _is_variable(n, parents)]
        binds = [n for n in refs if _is_binding(n, parents)]
        for ref in refs:
            at = span[id(ref)][0]
            if any(ref is b for b in binds) or at < lo:
                continue
            if not _read_only(ref, parents):
                problems.append((parents.statement(ref), f"`{name}`, which holds outputs of the pipeline in `{var}`, is bound here in a way dali-migrate does not follow: convert by hand"))
            elif at < hi and not any(lo <= span[id(b)][0] < at and _always_before(b, ref, parents) for b in binds):
                problems.append((parents.statement(ref), f"`{name}` may not hold outputs of the pipeline in `{var}` yet here (`{var}` is assigned more than once): convert by hand"))
            elif at >= hi and not any(hi <= span[id(b)][0] < at and _always_before(b, ref, parents) for b in binds):
                problems.append((parents.statement(ref), f"`{name}` may still hold outputs of the pipeline `{var}` held before it was assigned again: convert by hand"))
    return problems


def _is_variable(ref: cst.Name, parents: Parents) -> bool:
    """Is ``ref`` a variable (not ``x.name``, ``f(name=...)``, a parameter or a def's name)?"""
    parent = parents.of(ref)
    if isinstance(parent, cst.Attribute) and parent.attr is ref:
        return False
    if isinstance(parent, cst.Arg) and parent.keyword is ref:
        return False
    return not isinstance(parent, (cst.Param, cst.FunctionDef, cst.ClassDef, cst.ImportAlias))


def _read_only(ref: cst.Name, parents: Parents) -> bool:
    """Is ``ref`` only read (not bound by an augmented or annotated assignment, ``with ... as``,
    ``:=``, a comprehension, ``del``, an import)?"""
    cur, parent = ref, parents.of(ref)
    while isinstance(parent, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
        cur, parent = parent, parents.of(parent)
    if isinstance(parent, (cst.AugAssign, cst.AnnAssign, cst.NamedExpr, cst.CompFor)) and parent.target is cur:
        return False
    return not isinstance(parent, (cst.AsName, cst.Del))


def _always_before(binding: cst.Name, ref, parents: Parents) -> bool:
    """Does the binding ``binding`` (an assignment's or a ``for``'s target) always run before
    ``ref`` is read, with nothing in between that the binding's statement does not run first?
    An assignment: ``ref`` is in a later statement of the same block (or later in its line); a
    ``for``: ``ref`` is in its body."""
    owner = parents.of(binding)
    while isinstance(owner, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
        owner = parents.of(owner)
    if isinstance(owner, cst.For):
        return parents.contains(owner.body, ref)
    stmt = parents.statement(binding)
    if parents.contains(stmt, ref):
        # `out = pipe.run(); show(out)`: a later small statement of the line
        small = parents.of(owner)
        return isinstance(small, cst.Assign) and parents.span[id(small)][1] <= parents.span[id(ref)][0]
    block = parents.of(stmt)
    cur = parents.statement(ref)
    while cur is not None:
        if parents.of(cur) is block:
            return parents.span[id(cur)][0] > parents.span[id(stmt)][0]
        cur = parents.statement(parents.of(cur))
    return False


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
                    for key, text in getattr(rule, "helpers", lambda site, call: {})(site, call).items():
                        p.helpers[key] = text
                    for other, other_rule in getattr(rule, "also", lambda call, site: ())(call, site):
                        p.rewrites[id(other)] = (other_rule, site)
                    from dali_migrate.pipe_lists import members

                    p.together |= {m.pipeline.name for m in members(call, site) or () if m is not None}
            return
        call = parents.of(parent) if isinstance(parent, cst.Attribute) and parent.value is node else None
        if _only_shown(node, parents):
            return
        if isinstance(parent, cst.Attribute) and parent.value is node and not (isinstance(call, cst.Call) and call.func is parent):
            rule = pipe_rules.get(("attribute", parent.attr.value))
            if rule is not None:
                _use(rule, parent, stmt, site, p)
            elif parent.attr.value in pipe_rules:
                p.blockers.append((stmt, f"`{state.var}.{parent.attr.value}` is used here without being called: convert by hand"))
            else:
                p.blockers.append((stmt, f"`{state.var}.{parent.attr.value}`: the converted generator has no attributes; "
                                         f"use what the pipeline is made with instead, or convert by hand"))
            return
        if not (isinstance(call, cst.Call) and call.func is parent):
            target = _handoff_target(node, parents)
            if target is not None:
                _plan_handoff(node, kind, target, parents, state, site, pipe_rules, batch_rules, p)
                return
            from dali_migrate import pipe_lists

            if pipe_lists.plan_appended(node, site, parents, pipe_rules, p):
                return
            if pipe_lists.plan_object_list(node, site, parents, pipe_rules, p):
                return
            nnabla = _nnabla_iterator(node, parents, site.names)
            if nnabla is not None:
                p.blockers.append((stmt, nnabla))
                return
            undefined = _undefined_callee(node, parents)
            if undefined is not None:
                p.blockers.append((stmt, f"the pipeline object `{state.var}` is given to {undefined}(), a name this file neither "
                                         f"defines nor imports (the original raises NameError here): import it, then convert"))
                return
            # (the use is quoted: a Pipeline subclass that does not convert is marked at the class)
            used = code(stmt.with_changes(leading_lines=[])).strip().splitlines()[0][:60] if stmt is not None else ""
            p.blockers.append((stmt, f"the pipeline object `{state.var}` is used by `{used}` in a way dali-migrate cannot follow (e.g. passed to an iterator); convert by hand"))
            return
        rule = pipe_rules.get(parent.attr.value)
        if rule is None:
            p.blockers.append((stmt, f"{state.var}.{parent.attr.value}() has no automatic dynamic-mode conversion: convert by hand"))
            return
        _use(rule, call, stmt, site, p)
        return
    if (kind == "outputs" and isinstance(parent, cst.CompFor) and parent.iter is node
            and not (isinstance(parent.target, cst.Name) and parent.target.value in state.batches)
            and _kind(parents.of(parent), parents, state) != "outputs"):
        # `[f(out) for out in outputs]`: what is done with each output there (TensorList methods on
        # an ndd.Batch) is not followed
        p.blockers.append((stmt, f"pipeline outputs are iterated by `{one_line(parents.of(parent))}`, whose items "
                                 "dali-migrate does not follow: convert by hand"))
        return
    if kind == "outputs" and batch_to_numpy.call_of(node, parents, site) is not None:
        p.blockers.append((stmt, "numpy's array of the tuple of pipeline outputs (each a TensorList, which numpy read "
                                 "as a dense array; an ndd.Batch it does not): convert by hand"))
        return
    if kind in ("outputs", "batch") and isinstance(parent, cst.IfExp) and node is not parent.test and _kind(parent, parents, state) is None:
        # `out if flag else None`: what is done with the result (TensorList methods) is not followed
        p.blockers.append((stmt, f"pipeline outputs are one arm of `{one_line(parent)}`, whose other arm is not the "
                                 "same kind of DALI data: dali-migrate does not follow the result; convert by hand"))
        return
    if kind in ("outputs", "batch"):
        target = _handoff_target(node, parents)
        if target is not None:
            _plan_handoff(node, kind, target, parents, state, site, pipe_rules, batch_rules, p)
            return
        call = parents.of(parent) if isinstance(parent, cst.Arg) else None
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and any(
            d.name.value == call.func.value for d in parents.find(cst.FunctionDef)
        ):
            # A function of this file would get ndd.Batch objects where it used TensorLists.
            p.blockers.append((stmt, f"pipeline outputs are passed to {call.func.value}(), which dali-migrate cannot follow here (defined more than once, decorated, or not only called): convert it and this call by hand"))
            return
        if (
            kind == "outputs"
            and isinstance(call, cst.Call)
            and isinstance(call.func, cst.Name)
            and call.func.value in _CARRIERS
            and not _shadowed(call.func.value, parents)
            and not (isinstance(parents.of(call), cst.For) and parents.of(call).iter is call
                     and _iterated_outputs(parents.of(call), parents, state) is not None)
        ):
            p.blockers.append((stmt, f"pipeline outputs are passed to {call.func.value}(), whose result dali-migrate does not follow: convert by hand"))
            return
        display = parents.of(parent) if isinstance(parent, cst.Element) or (
            isinstance(parent, cst.DictElement) and parent.value is node) else None
        if isinstance(display, (cst.Tuple, cst.List, cst.Set, cst.Dict)):
            up = parents.of(display)
            if (isinstance(up, (cst.For, cst.CompFor)) and up.iter is display) or (
                    isinstance(up, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and up.value is display):
                # `for b in (first, second): b.at(0)`, `pair = (first, second)`, `d = {"a": first}`:
                # what is done with it there would stay as written, a TensorList's methods on an ndd.Batch
                p.blockers.append((stmt, f"pipeline outputs (`{code(node)}`) are put in `{one_line(display)}`, "
                                         "which dali-migrate does not follow: convert by hand"))
                return
    if kind != "batch":
        return
    probed = _hasattr_call(node, parents)
    if probed is not None:
        call, attr = probed
        if attr == "as_cpu" and batch_rules.get("as_cpu") is not None:
            _use(_HasAsCpu, call, stmt, site, p)
        else:
            p.blockers.append((stmt, f"`{one_line(call)}` asks a TensorList for an attribute: an ndd.Batch has other "
                                     "attributes (the answer would change): convert by hand"))
        return
    iterated = _iterating(node, parents)
    if iterated is not None and not _samples_read_by_numpy(iterated, parents, site):
        p.blockers.append((stmt, f"a TensorList is iterated here (`{one_line(iterated)}`): its samples were TensorCPU/"
                                 "TensorGPU objects, an ndd.Batch's are ndd.Tensor, whose methods and printed form "
                                 "differ: convert by hand (batch.select(i), or np.array of each sample)"))
        return
    dense = batch_to_numpy.call_of(node, parents, site)
    if dense is not None:
        _use_whole_call(batch_rules, "__numpy__", dense, stmt, site, p,
                        "numpy's array of a whole TensorList needs rule batch-to-numpy, which is disabled")
        return
    sample = parent if isinstance(parent, cst.Subscript) and parent.value is node else None
    if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value == "at":
        sample = parents.of(parent)
    to_torch = sample_to_torch.call_of(sample, parents, site.names) if sample is not None else None
    if to_torch is not None:
        # to_torch_tensor(tl[i], copy) as a whole: it cannot read the ndd.Tensor that select(i) gives
        _use_whole_call(batch_rules, "__to_torch__", to_torch, stmt, site, p,
                        "to_torch_tensor() of a sample needs rule sample-to-torch, which is disabled")
        return
    if isinstance(parent, cst.Attribute) and parent.value is node:
        call = parents.of(parent)
        if isinstance(call, cst.Call) and call.func is parent:
            rule = batch_rules.get(parent.attr.value)
            if rule is None:
                renamed = _OLD_METHOD_NAMES.get(parent.attr.value)
                if renamed is not None:
                    p.blockers.append((stmt, f"TensorList.{parent.attr.value}() is the old name of {renamed}(), which DALI "
                                             f"2.4's TensorList no longer has (the original fails here): write {renamed}(), "
                                             f"which dali-migrate converts"))
                else:
                    p.blockers.append((stmt, f"TensorList.{parent.attr.value}() has no automatic counterpart on ndd.Batch: convert by hand"))
            else:
                _use(rule, call, stmt, site, p)
            return
        rule = batch_rules.get(("attribute", parent.attr.value))
        if rule is None:
            p.blockers.append((stmt, f"TensorList.{parent.attr.value} differs on ndd.Batch: convert by hand"))
        else:
            _use(rule, parent, stmt, site, p)
        return
    if isinstance(parent, cst.Subscript) and parent.value is node:
        rule = batch_rules.get("__getitem__")
        if rule is None or len(parent.slice) != 1 or not isinstance(parent.slice[0].slice, cst.Index):
            p.blockers.append((stmt, "indexing a TensorList: use .select(i) on the ndd.Batch (not converted automatically here)"))
        elif isinstance(parents.of(parent), cst.Attribute) and parents.of(parent).value is parent:
            # tl[i].as_cpu(), tl[i].shape(): TensorCPU/TensorGPU methods that an ndd.Tensor names otherwise or lacks
            method = parents.of(parent)
            copy = parents.of(method)
            if method.attr.value == "as_cpu" and _sample_copy_read_by_numpy(copy, method, parents, site):
                # np.array(tl[i].as_cpu()): the sample's values, whichever object holds them
                _use(rule, parent, stmt, site, p)
                cpu_rule = batch_rules.get("as_cpu")
                if cpu_rule is None:
                    p.blockers.append((stmt, "TensorList.as_cpu() needs rule batch-cpu, which is disabled"))
                else:
                    _use(cpu_rule, copy, stmt, site, p)
            elif method.attr.value == "as_cpu" and _read_by_pil(copy, parents):
                p.blockers.append((stmt, "a sample's .as_cpu() (a TensorCPU) goes to PIL's Image.fromarray, which raises "
                                         "TypeError (\"Cannot handle this data type\") on it: a TensorCPU's "
                                         "__array_interface__ gives struct-style typestrs ('=B' for uint8), not NumPy's ('|u1'). "
                                         "np.asarray(batch.select(i).cpu()) would make this code work where the original "
                                         "fails, a change of behaviour dali-migrate leaves to a person"))
            elif method.attr.value == "as_cpu":
                p.blockers.append((stmt, "a sample's .as_cpu() gives a TensorCPU, read by other code through its buffer "
                                         "(__array_interface__); its counterpart batch.select(i).cpu() is an ndd.Tensor, "
                                         "read through __array__/DLPack: where a NumPy array is meant, write "
                                         "np.asarray(batch.select(i).cpu()) by hand"))
            elif (shape_call := sample_shape.call_of(parent, parents)) is not None:
                shape_rule = batch_rules.get("__sample_shape__")
                if shape_rule is None:
                    p.blockers.append((stmt, "a sample's .shape() needs rule sample-shape, which is disabled"))
                elif _shadowed("list", parents):
                    p.blockers.append((stmt, "a sample's .shape() would become list(batch.select(i).shape), but this file "
                                             "binds the name `list` itself: convert by hand"))
                else:
                    _use(shape_rule, shape_call, stmt, site, p)
            else:
                p.blockers.append((stmt, f"a sample's .{method.attr.value} (TensorCPU/TensorGPU) differs on the ndd.Tensor that select(i) gives: convert by hand"))
        else:
            _use(rule, parent, stmt, site, p)
        return
    if isinstance(parent, cst.Arg):
        call = parents.of(parent)
        if isinstance(call, cst.Call) and m.matches(call.func, m.Name("type") | m.Name("isinstance")) and call.args[0] is parent:
            check = call
            if m.matches(call.func, m.Name("type")):
                check = parents.of(call)
                check = parents.of(check) if isinstance(check, cst.ComparisonTarget) else check
            rule = batch_rules.get("__device_check__")
            if not device_check.matches(check) or _shadowed(call.func.value, parents):
                p.blockers.append((stmt, "the class of a pipeline output is looked at here (an ndd.Batch is neither TensorList): convert by hand"))
            elif rule is None:
                p.blockers.append((stmt, "a pipeline output's class is checked: use batch.device.device_type"))
            else:
                _use(rule, check, stmt, site, p)
            return
        if isinstance(call, cst.Call) and m.matches(call.func, m.Name("len")) and len(call.args) == 1:
            rule = batch_rules.get("__len__")
            if rule is None:
                p.blockers.append((stmt, "len() of a TensorList: use batch.batch_size"))
            else:
                _use(rule, call, stmt, site, p)


def _read_by_pil(copy, parents: Parents) -> bool:
    """Does ``copy`` (``tl[i].as_cpu()``) go to ``Image.fromarray``, as its argument or as an item
    of a list bound to a name that the same scope passes on as ``Image.fromarray(name[k])``?"""

    def fromarray_arg(node) -> bool:
        arg = parents.of(node)
        call = parents.of(arg) if isinstance(arg, cst.Arg) else None
        return isinstance(call, cst.Call) and m.matches(
            call.func, m.Attribute(value=m.Name("Image") | m.Attribute(value=m.Name("PIL"), attr=m.Name("Image")), attr=m.Name("fromarray")))

    if fromarray_arg(copy):
        return True
    element = parents.of(copy)
    listed = parents.of(element) if isinstance(element, cst.Element) else None
    assign = parents.of(listed) if isinstance(listed, cst.List) else None
    if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)):
        return False
    name = assign.targets[0].target.value
    scope = parents.scope(assign)
    return any(
        parents.scope(n) is scope and isinstance(parents.of(n), cst.Subscript) and parents.of(n).value is n
        and fromarray_arg(parents.of(n))
        for n in parents.names(name)
    )


def _sample_copy_read_by_numpy(copy, method, parents: Parents, site) -> bool:
    """Is ``copy`` (``tl[i].as_cpu()``) called without arguments as the one argument of numpy's
    ``array`` / ``asarray``, which read the same values from a TensorCPU and an ndd.Tensor?"""
    return isinstance(copy, cst.Call) and copy.func is method and not copy.args and _read_by_numpy(copy, parents, site)


def _read_by_numpy(node, parents: Parents, site) -> bool:
    """Is ``node`` the one argument of numpy's ``array`` / ``asarray`` (numpy imported as ``site.numpy``)?"""
    arg = parents.of(node)
    call = parents.of(arg)
    return bool(
        site.numpy and isinstance(arg, cst.Arg) and arg.value is node and arg.keyword is None and not arg.star
        and isinstance(call, cst.Call) and len(call.args) == 1
        and m.matches(call.func, m.Attribute(value=m.Name(site.numpy), attr=m.Name("array") | m.Name("asarray")))
    )


#: TensorList methods of DALI before 1.0 and the names they have had since (DALI's video_example.py)
_OLD_METHOD_NAMES = {"asCPU": "as_cpu"}

_PROXY_SERVER = "nvidia.dali.plugin.pytorch.experimental.proxy.DALIServer"


def _nnabla_iterator(node, parents: Parents, names) -> Optional[str]:
    """Why the pipeline ``node``, given to nnabla's ``DaliIterator`` (Sony's nnabla-ext-cuda,
    ``nnabla_ext.cuda.experimental.dali_iterator``), stays as it is; else None. That class runs the
    pipeline object itself and copies each output into an nnabla array, as MXNet's iterator does."""
    call = _call_given(node, parents)
    path = dotted(call.func) if call is not None else None
    if path is None or not path.endswith("DaliIterator"):
        return None
    head = path.split(".")[0]
    # (dali_imports follows DALI's own imports only): the file's `from nnabla_ext... import x`
    bound = [
        imp for imp in parents.find(cst.ImportFrom)
        if imp.module is not None and code(imp.module).startswith("nnabla_ext") and not isinstance(imp.names, cst.ImportStar)
        and any((a.asname.name.value if a.asname else code(a.name).split(".")[0]) == head for a in imp.names)
    ]
    if not bound:
        return None
    return ("the pipeline is given to nnabla's DaliIterator (nnabla_ext.cuda.experimental.dali_iterator), which runs "
            "the pipeline object itself: keep this pipeline in pipeline mode, or iterate the converted generator and "
            "make each output an nnabla array via DLPack (nnabla.utils.dlpack.from_dlpack(ndd.as_tensor(out).__dlpack__())), "
            "by hand")


def _undefined_callee(node, parents: Parents) -> Optional[str]:
    """The name of the function ``node`` is passed to, where nothing in the file binds it (no def,
    class, import, assignment or parameter, no star import) and it is no builtin; else None."""
    import builtins

    call = _call_given(node, parents)
    if not (call is not None and isinstance(call.func, cst.Name)):
        return None
    name = call.func.value
    if hasattr(builtins, name) or _shadowed(name, parents):
        return None
    if any(isinstance(n.names, cst.ImportStar) for n in parents.find(cst.ImportFrom)):
        return None
    return name


def _consumer_hint(call, parents: Parents, names) -> Optional[str]:
    """What to do where the pipeline ``call`` makes goes straight to DALI's PyTorch proxy
    (``DALIServer(pipe(...))``), which runs the pipeline object itself; else None."""
    arg = parents.of(call) if call is not None else None
    server = parents.of(arg) if isinstance(arg, cst.Arg) else None
    if names is None or not isinstance(server, cst.Call) or names.qualify(server.func) != _PROXY_SERVER:
        return None
    return ("the pipeline is given to DALIServer (PyTorch proxy), which runs the pipeline object itself: its "
            "proxy sends the samples of DataLoader workers to the pipeline and hands back the batches; dynamic "
            "mode has no proxy: keep this pipeline in pipeline mode, or move its operators, as ndd calls on "
            "ndd.as_batch(samples), to where the DataLoader's batches are used, by hand")


#: as rules/not_yet_converted.py says it of a pipeline's ``serialize()`` it cannot follow
SERIALIZED = "serialized pipelines (e.g. for Triton) need pipeline mode: keep this pipeline as it is"


def _serialized(call, parents: Parents, label: str) -> Optional[str]:
    """The reason for ``p(...).serialize(...)``, the pipeline object made only to be serialized; else None."""
    attr = parents.of(call) if call is not None else None
    if not (isinstance(attr, cst.Attribute) and attr.value is call and attr.attr.value == "serialize"):
        return None
    outer = parents.of(attr)
    if not (isinstance(outer, cst.Call) and outer.func is attr):
        return None
    return f"{label}(...).serialize(): {SERIALIZED}"


def _only_shown(node, parents: Parents) -> bool:
    """Is the pipeline object only turned into text here: ``print(pipe)`` (the builtin, the object
    as a positional argument) or ``f"{pipe}"`` (no format spec)?

    DALI's Pipeline defines neither ``__str__`` nor ``__repr__``: what is printed is object's
    default ``<nvidia.dali.pipeline.Pipeline object at 0x...>``, whose address differs on every
    run. The generator's default text (``<generator object name at 0x...>``) tells as much, so such
    a use stays as it is instead of leaving the whole pipeline to a person."""
    parent = parents.of(node)
    if isinstance(parent, cst.FormattedStringExpression):
        return parent.expression is node and parent.format_spec is None
    if not (isinstance(parent, cst.Arg) and parent.value is node and parent.keyword is None and not parent.star):
        return False
    call = parents.of(parent)
    return isinstance(call, cst.Call) and m.matches(call.func, m.Name("print")) and not _shadowed("print", parents)


def _iterator_call(node, parents, site):
    """(the call, its qualified name) when ``node`` is the pipelines argument of a framework
    iterator from ``nvidia.dali.plugin`` (``It(pipe, ...)``, ``It([pipe], ...)``) or of a class of
    the file derived from one (then the name is its base's), else None."""
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
        # a class of the file derived from the iterator (``class Wrapper(DALIClassificationIterator)``)
        derived = iterator_subclasses.resolve(call.func, parents, site.names)
        if derived is None:
            return None
        q = derived[1]
    skip = iterator_subclasses.skipped(call, parents, site.names)  # the subclass's own parameters come first
    first = call.args[skip] if len(call.args) > skip else None
    if cur is not first and not (cur.keyword is not None and cur.keyword.value == "pipelines"):
        return None
    return call, q


def _use_whole_call(batch_rules: dict, key: str, call, stmt, site, p: Plan, disabled: str) -> None:
    """Plan the rule of ``batch_rules[key]`` on ``call``, a call that takes a batch or a sample
    (numpy's array, to_torch_tensor), or say that it is disabled."""
    rule = batch_rules.get(key)
    if rule is None:
        p.blockers.append((stmt, disabled))
    else:
        _use(rule, call, stmt, site, p)


def _use(rule, node, stmt, site, p: Plan) -> None:
    from dali_migrate import fed_inputs

    if rule.receiver in ("pipeline", "iterator") and rule.id not in fed_inputs.USES and fed_inputs.is_fed(site.pipeline):
        # it becomes a function of each run's fed data, not a stream of batches
        p.blockers.append((stmt, f"{site.pipeline.name} is fed from outside (fn.external_source without source=): "
                                 f"only build(), run() and feed_input() of it are converted, not {rule.summary.split(' ', 1)[0]}: convert by hand"))
        return
    reason = rule.blocker(node, site)
    if reason:
        p.blockers.append((stmt, reason))
    elif rule.rewrite(node, _receiver(node), site) is None and not _alone_in_statement(node, stmt):
        p.blockers.append((stmt, f"{rule.summary}, but here its value is used: convert by hand"))
    else:
        p.rewrites[id(node)] = (rule, site)
        p.helpers.update(rule.needs(node, site))


def _receiver(node):
    if isinstance(node, cst.Comparison):
        return device_check.receiver(node)
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


# -- classes --------------------------------------------------------------------------------------
#
# Training code keeps its pipeline in a class: a method builds and returns it (`pipe =
# self.make_pipe()`), or a method stores it (`self.pipe = p(...)`) for the others to use. Both are
# followed only where the file shows every way the method or attribute can be reached: a plain
# method of a module-level class, reached only as `self.<name>` in plain methods of that class,
# nothing else in the file naming it (no `obj.<name>` from outside, no class-level binding, no
# string that getattr/setattr could use, no class of the file deriving from it). Then `self.pipe`
# always holds the converted generator, and each of its uses is planned like a local variable's.


@dataclasses.dataclass(frozen=True)
class _Method:
    """A method of ``cls`` that returns a pipeline; its callers (``refs``: the ``self.name``
    nodes called) get it."""

    key: tuple
    name: str
    cls: cst.ClassDef = dataclasses.field(compare=False)
    refs: tuple = dataclasses.field(compare=False)


def _method_self(func, parents: Parents) -> Optional[tuple]:
    """(class, the name of `self`) when ``func`` is a plain method (undecorated, not async, in the
    body of a module-level undecorated class, `self` never assigned), else None."""
    if not isinstance(func, cst.FunctionDef) or func.decorators or func.asynchronous is not None:
        return None
    cls = parents.scope(func)
    if not isinstance(cls, cst.ClassDef) or cls.decorators or parents.scope(cls) is not None or parents.of(func) is not cls.body:
        return None
    positional = [*func.params.posonly_params, *func.params.params]
    if not positional:
        return None
    me = positional[0].name.value
    if _rebinds(_scope_nodes(func, parents), me, parents):
        return None
    return cls, me


def _on_self_of(ref, cls, parents: Parents) -> bool:
    """Is ``ref`` a ``self.<name>`` attribute read in a plain method of ``cls``?"""
    if not isinstance(ref, cst.Attribute):
        return False
    owner = _method_self(parents.scope(ref), parents)
    return owner is not None and owner[0] is cls and m.matches(ref.value, m.Name(owner[1]))


_REFLECTION = ("getattr", "setattr", "delattr", "hasattr")


def _member_problem(cls, attr: str, parents: Parents, method: bool):
    """The ``self.<attr>`` nodes of ``cls``'s methods, or why the attribute (``method``: the method)
    cannot be followed (a str)."""
    cname = cls.name.value
    for other in parents.find(cst.ClassDef):
        if other is not cls and any(n.value == cname for b in other.bases for n in parents.find(cst.Name, within=b.value)):
            return f"class {other.name.value} of this file derives from {cname} and may replace `{attr}`: convert by hand"
    own = _scope_nodes(cls, parents)
    defs = [d for d in own.nested if isinstance(d, cst.FunctionDef) and d.name.value == attr]
    if len(defs) != (1 if method else 0) or any(isinstance(n, cst.Name) and n.value == attr for n in own.nodes):
        return f"class {cname} defines `{attr}` at class level{' more than once' if method else ''}: dali-migrate cannot tell what `self.{attr}` holds; convert by hand"
    for s in parents.find(cst.SimpleString):
        if s.evaluated_value == attr:
            return f"the file names `{attr}` in a string (getattr/setattr could reach it): dali-migrate cannot follow `self.{attr}`; convert by hand"
    for n in parents.find(cst.Name):
        if n.value in ("__dict__", "vars", "__setattr__", "__getattr__", "__getattribute__"):
            return f"the file uses {n.value}: dali-migrate cannot follow `self.{attr}`; convert by hand"
        call = parents.of(n)
        if n.value in _REFLECTION and isinstance(call, cst.Call) and call.func is n and not (
            len(call.args) >= 2 and isinstance(call.args[1].value, cst.SimpleString)
        ):
            return f"{n.value}() with a computed name could reach `self.{attr}`: convert by hand"
    refs = []
    modules = _imported_modules(parents)
    for n in parents.names(attr):
        ref = parents.of(n)
        if not (isinstance(ref, cst.Attribute) and ref.attr is n):
            continue
        root = ref.value
        while isinstance(root, cst.Attribute):
            root = root.value
        if isinstance(root, cst.Name) and root.value in modules or isinstance(parents.statement(ref), cst.SimpleStatementLine) and any(
            isinstance(s, (cst.Import, cst.ImportFrom)) for s in parents.statement(ref).body
        ):
            continue  # `nvidia.dali.pipeline`: a module's attribute, not the class's
        if not _on_self_of(ref, cls, parents):
            return f"`.{attr}` is used here on something other than `self` in a method of {cname}: dali-migrate cannot follow it; convert by hand"
        refs.append(ref)
    return refs


def _imported_modules(parents: Parents) -> set:
    """Names that ``import a.b`` / ``import a.b as c`` bind (``a``, ``c``)."""
    found = set()
    for stmt in parents.find(cst.Import):
        for alias in stmt.names:
            found.add(alias.asname.name.value if alias.asname else code(alias.name).split(".")[0])
    return found


def _factory(func, parents: Parents):
    """(what to follow, None) when ``func`` returns a pipeline to callers that can all be seen:
    a module-level function's name, or a _Method; else (None, a reason or None)."""
    if isinstance(func, cst.FunctionDef) and parents.scope(func) is None:
        return func.name.value, None
    owner = _method_self(func, parents)
    if owner is None:
        return None, None
    found = _member_problem(owner[0], func.name.value, parents, method=True)
    if isinstance(found, str):
        return None, found
    return _Method(key=(id(owner[0]), func.name.value), name=func.name.value, cls=owner[0], refs=tuple(found)), None


def _attr_bound(node, parents: Parents) -> bool:
    """Is ``node`` assigned, deleted or a loop/with target (not only read)?"""
    cur, parent = node, parents.of(node)
    while isinstance(parent, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
        cur, parent = parent, parents.of(parent)
    if isinstance(parent, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr)) and parent.target is cur:
        return True
    return isinstance(parent, (cst.AsName, cst.Del))


def _member_target(assign, call, parents: Parents) -> Optional[tuple]:
    """(class, attribute, method) when ``assign`` is ``self.<attribute> = call`` in a plain method."""
    if not (isinstance(assign, cst.Assign) and assign.value is call and len(assign.targets) == 1):
        return None
    target = assign.targets[0].target
    if not isinstance(target, cst.Attribute):
        return None
    method = parents.scope(assign)
    owner = _method_self(method, parents)
    if owner is None or not m.matches(target.value, m.Name(owner[1])):
        return None
    return owner[0], target.attr.value, method


def _plan_member(cls, attr, assigns, parents, info, make_site, scope_pipes, pipe_vars, pipe_rules, batch_rules, p: Plan) -> None:
    """``self.<attr>`` of ``cls`` is assigned this pipeline (``assigns``: (Assign, method, whether
    the assignment's value is the pipeline's own call)): every other assignment of it, and every
    use, must be one dali-migrate converts."""
    found = _member_problem(cls, attr, parents, method=False)
    if isinstance(found, str):
        for assign, _, _ in assigns:
            p.blockers.append((parents.statement(assign), found))
        return
    ours = {id(a.targets[0].target) for a, _, _ in assigns}
    uses: dict = {}  # id(method) -> method
    for ref in found:
        if id(ref) in ours:
            continue
        if _attr_bound(ref, parents):
            p.blockers.append((parents.statement(ref), f"`self.{attr}` also holds something other than the pipeline {info.name} here: dali-migrate cannot follow it; convert by hand"))
            continue
        method = parents.scope(ref)
        uses[id(method)] = method
    for method in uses.values():
        me = _method_self(method, parents)[1]
        # Where the pipeline is made, its arguments can be read (iterators' batch sizes, readers).
        made_here = [a.value for a, where, own_call in assigns if where is method and own_call]
        construction = made_here[0] if len(assigns) == 1 and made_here else None
        site = make_site(info.name, construction, scope_pipes=scope_pipes.get(id(method), {}))
        state = _State(var=f"{me}.{attr}", attr=(me, attr), other_pipes=set(pipe_vars.get(id(method), set())))
        own = _scope_nodes(method, parents)
        for bad in _track_names(own.nodes, state, parents):
            p.blockers.append((parents.statement(bad), "a name holding pipeline outputs is also assigned other values here: convert by hand"))
        _plan_nodes(method, own, own.nodes, state, parents, site, pipe_rules, batch_rules, p)
