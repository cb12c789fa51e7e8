"""Python calls in a pipeline's per-iteration code run once, before the loop.

A pipeline function runs once, when the pipeline is built: ``fn.rotate(images,
angle=random.uniform(-10, 10))`` draws one angle, and every batch is rotated by it. The converted
loop would draw a new one every iteration. So a Python call inside a statement of the loop (an
operator's argument, a factor in arithmetic on data) is evaluated once, into a name, where the
pipeline evaluated it: among the statements that run before the loop, in the original order.

    images = fn.rotate(images, angle=random.uniform(-a, a))   ->   angle = random.uniform(-a, a)
                                                                    ...loop:
                                                                        images = ndd.rotate(images, angle=angle)

Left in place, because evaluating them every iteration gives the same value: pure builtins
(``int``, ``len``, ...), ``math.*``, numpy outside ``numpy.random``, ``os.path.*``, DALI's own
calls and methods of what they make (``types.Constant(15).float32()``), methods of DALI data, and
a function that the function building the pipeline gets and calls on its data where every value
it gets in the file is arithmetic of its arguments alone (``operation(l, r)``:
dali_migrate/graph_callables.py). A call that reads a value computed per iteration, or that sits
in an ``if``/``for``/``with`` of the loop (where it ran once per trace, or several times), stops
the conversion with a marker. ``fn.external_source``'s source is its rule's; its other arguments
(``dtype=[dali_type(t)]``) were read once, like any operator's.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import libcst as cst

from dali_migrate import cst_walk, graph_callables
from dali_migrate import parents as parents_mod
from dali_migrate.cst_util import assignment, code, dotted, fresh_name, one_line
from dali_migrate.rules.base import Rule
from dali_migrate.rules.conditionals import PURE_BUILTINS

RULE = Rule(
    id="build-time-calls",
    summary="Python calls in the pipeline's per-iteration code (random.uniform(...), user functions) are evaluated once before the loop, as when the pipeline was built",
    order=5,
)

# The pure builtins conditions may use, and constructors and formatting that are pure as well;
# globals(), the module's own dict every time (how hidden_globals.py reads a module variable that
# a setting's parameter hides: read in the loop, like any other module variable)
_PURE_BUILTINS = PURE_BUILTINS | {"list", "dict", "set", "frozenset", "pow", "divmod", "slice", "repr", "format", "hash", "globals"}
_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)
_OWN_ARGUMENTS = frozenset({"external_source", "python_function", "torch_python_function", "dl_tensor_python_function"})
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
# _collect tests every node of a pipeline by its exact type: none of these classes has subclasses,
# and isinstance() against them takes abc's slow path for every node that is none of them
_SCOPE_TYPES = frozenset(_SCOPES)
# What a DataNode of DALI 2.4 has besides dunders (its class's members and what __init__ sets):
# `x.cpu().numpy()` reads something else, so `x` is not DALI data (pipeline mode would raise
# AttributeError there). tests/rules/test_build_time_calls.py compares it with the installed DALI.
DATA_NODE_ATTRS = frozenset((
    "_check_gpu2cpu", "_to_backend", "cpu", "gpu", "property", "shape", "source_info",
    "device", "dtype", "index", "layout", "name", "ndim", "source",
))
_COMPREHENSION_TYPES = frozenset(_COMPREHENSIONS)


@dataclasses.dataclass
class Plan:
    #: id(call or comprehension as written) -> the Name that replaces it in the loop
    replace: dict = dataclasses.field(default_factory=dict)
    #: statement index -> assignments to run right before that statement's place (before the loop)
    before: dict = dataclasses.field(default_factory=dict)
    blocker: Optional[str] = None


def _loop_names(info) -> set:
    """Names bound by the statements that run every iteration."""
    from dali_migrate.pipeline_analysis import _assigned_names

    found: set = set()
    for i, stmt in enumerate(info.statements):
        if i not in info.setup or i in info.reader_indices:  # a reader's outputs too
            found |= _assigned_names(stmt)
    return found


class _Calls:
    """Sorts the calls of one pipeline's per-iteration statements."""

    def __init__(self, info, names, numpy_names: set, helpers: set, module=None):
        self.info, self.names = info, names
        self.numpy_names, self.helpers = numpy_names, helpers
        self.op_calls = {id(call) for call, _ in info.op_calls}
        self.loop = _loop_names(info)
        params = {p.name.value for p in _all_params(info.func)}
        self.shadowed = self.loop | params
        self.module = module
        # parameters whose attributes and items the loop reads are read once too (what the caller
        # passed may change after it made the pipeline: the pipeline had read them)
        self.params = (params | self._enclosing_params()) - self.loop
        self._changed: Optional[set] = None

    def _enclosing_params(self) -> set:
        """Parameters of the functions the pipeline function is defined in (``def
        create_dali_pipeline(..., ops_meta, ...)`` around a ``with pipe:`` graph), that it does not
        bind itself: its code read them when the pipeline was built, like its own parameters."""
        if self.module is None or any(stmt is self.info.func for stmt in self.module.body):
            return set()  # (a function of the module's own: no function around it)
        from dali_migrate.pipeline_analysis import _assigned_names

        index = parents_mod.build(self.module)
        if id(self.info.func) not in index.span:
            return set()
        own = {p.name.value for p in _all_params(self.info.func)} | _assigned_names(self.info.func.body)
        found: set = set()
        scope = index.scope(self.info.func)
        while scope is not None:
            if type(scope) is cst.FunctionDef:
                found |= {p.name.value for p in _all_params(scope)}
            scope = index.scope(scope)
        return found - own

    @property
    def changed(self) -> set:
        """Parameters the pipeline's own code may change: set an attribute or item of, or call a
        method of (``cfg.size = 8``, ``cfg.sizes.append(8)``)."""
        if self._changed is None:
            from dali_migrate.pipeline_analysis import _changed_in_place

            found: set = set()
            for node in cst_walk.walk(self.info.func):
                target = None
                if type(node) is cst.SimpleStatementLine:
                    found |= _changed_in_place(node)  # (cfg.size = 8, cfg.sizes[0] += 1, cfg.sizes.append(8))
                elif type(node) is cst.Call and type(node.func) is cst.Attribute:
                    target = node.func.value  # any method, anywhere: it may change its object
                elif type(node) is cst.Del:
                    target = node.target
                while type(target) in (cst.Attribute, cst.Subscript):
                    target = target.value
                if type(target) is cst.Name:
                    found.add(target.value)
            self._changed = found & self.params
        return self._changed

    def argument_read(self, node) -> bool:
        """``node`` is ``cfg.size``, ``args.crop[1]``: attributes and items of a parameter, with
        names and literals as keys, reading nothing the loop computes."""
        cur = node
        while type(cur) in (cst.Attribute, cst.Subscript):
            cur = cur.value
        return (type(cur) is cst.Name and cur.value in self.params
                and cst_walk.variables(node) <= self.params
                and not any(type(n) is cst.Call for n in cst_walk.walk(node)))

    def passed_function(self, name: str) -> Optional[str]:
        """graph_callables.reason for ``name`` where the pipeline is built by a function of the
        file that gets it (``arithmetic_pipeline(operation, ...)``); else NOT_A_PARAMETER."""
        if self.module is None or name in self.shadowed:
            return graph_callables.NOT_A_PARAMETER
        index = parents_mod.build(self.module)
        if id(self.info.func) not in index.span:
            return graph_callables.NOT_A_PARAMETER
        return graph_callables.reason(name, self.info.func, index)

    def is_dali(self, call: cst.Call) -> bool:
        if id(call) in self.op_calls:
            return True
        q = self.names.qualify(call.func) or ""
        if q.startswith("nvidia.dali"):
            return True
        func = call.func
        if isinstance(func, cst.Name) and func.value in self.helpers:
            return True  # a function of the file that builds DALI operators: per iteration
        if isinstance(func, cst.Name) and self.passed_function(func.value) is None:
            return True  # arithmetic of its arguments, given by the function that builds the pipeline
        if isinstance(func, cst.Attribute) and type(func.value) is cst.Call and self.is_dali(func.value):
            return True  # a method of what a DALI call made (types.Constant(15).float32(): rules/constant.py)
        # a method of DALI data (images.gpu(), x.shape()): the receiver is computed per iteration
        return isinstance(func, cst.Attribute) and bool(cst_walk.variables(func.value) & self.loop)

    def same_every_time(self, call: cst.Call) -> bool:
        func = call.func
        if isinstance(func, cst.Name):
            return func.value in _PURE_BUILTINS and func.value not in self.shadowed
        name = dotted(func) or ""
        root, _, rest = name.partition(".")
        if not rest or root in self.shadowed:
            return False
        if root in self.numpy_names:
            return not rest.startswith("random")
        return root == "math" or name.startswith("os.path.")

    def volatile(self, node) -> bool:
        """Holds a call whose value may differ from one evaluation to the next."""
        for sub in cst_walk.walk(node, not_into=_SCOPES):
            if type(sub) is cst.Call and not self.is_dali(sub) and not self.same_every_time(sub):
                return True
        return False


def _all_params(func: cst.FunctionDef):
    p = func.params
    out = [*p.posonly_params, *p.params, *p.kwonly_params]
    for star in (p.star_arg, p.star_kwarg):
        if isinstance(star, cst.Param):
            out.append(star)
    return out


def plan(info, names, taken: set, numpy_names: set, helpers: set, avoid: Optional[set] = None, module=None) -> Plan:
    """What to evaluate once, and where. ``taken``: names in use, updated with the new ones;
    ``avoid``: the names a new variable must not be (default ``taken``): keyword and attribute
    names do not clash with a variable, so ``angle=`` can give its value the name ``angle``;
    ``module``: the file the pipeline is in (functions passed to the one that builds it)."""
    avoid = taken if avoid is None else avoid
    result = Plan()
    calls = _Calls(info, names, numpy_names, helpers, module)
    result.blocker = _opaque_data(info, calls)
    if result.blocker is not None:
        return result
    later_setup: dict = {}  # name -> indices of setup statements that bind it
    from dali_migrate.pipeline_analysis import _assigned_names

    for i in info.setup:
        for name in _assigned_names(info.statements[i]):
            later_setup.setdefault(name, []).append(i)
    # reads of an argument made once already, at the loop's top level: {as written: name}
    known: dict = {}
    places = list(enumerate(info.statements))
    if info.returned is not None:
        places.append((len(info.statements), info.returned))
    for index, stmt in places:
        if index in info.setup or index in info.reader_indices:
            continue
        found = []
        reads = [] if isinstance(stmt, (cst.SimpleStatementLine, cst.BaseExpression)) and not info.conditionals else None
        # the returned expression is looked at as a statement: its own call may be what it is
        # (`return fn.external_source(source=Source())`: the source is the rule's, not evaluated here)
        _collect(cst.Expr(stmt) if isinstance(stmt, cst.BaseExpression) else stmt, calls, found,
                 skip_tests=info.conditionals, reads=reads)
        if reads:
            maybe = _evaluated_conditionally(stmt)
            found += [n for n in reads if id(n) not in maybe and not any(
                j > index for v in cst_walk.variables(n) for j in later_setup.get(v, []))]
        if not found:
            if not info.conditionals and not isinstance(stmt, (cst.SimpleStatementLine, cst.BaseExpression)):
                result.blocker = _compound_reads(stmt, index, calls, result, avoid, taken, later_setup, known)
                if result.blocker is not None:
                    return result
            continue
        if not isinstance(stmt, (cst.SimpleStatementLine, cst.BaseExpression)) or info.conditionals:
            # Only an `if`'s own condition at the loop's top level runs exactly once either way
            # (its elif conditions and its branches ran once or not at all when the pipeline
            # was built); in a pipeline with enable_conditionals, rules/conditionals.py owns ifs.
            in_test = set()
            if isinstance(stmt, cst.If) and not info.conditionals:
                in_test = {id(n) for n in _collect_expr(stmt.test, calls)}
            others = [n for n in found if id(n) not in in_test]
            if others:
                result.blocker = (
                    f"`{code(others[0])}` was evaluated once, when the pipeline was built; here it is inside "
                    f"`{code(stmt).splitlines()[0].strip()}`, which the converted loop runs every iteration: "
                    "evaluate it once before the pipeline by hand")
                return result
        maybe = _evaluated_conditionally(stmt)
        for node in found:
            if id(node) in maybe:
                # `parse(x) if x else (20, 20)`, `a or pick()`: it ran only where its condition held
                # (once, when the pipeline was built); before the loop it would run either way
                result.blocker = (
                    f"`{code(node)}` was evaluated once, when the pipeline was built, and only where a condition "
                    "(`x if c else y`, `and`, `or`) held: evaluate it once before the pipeline by hand")
                return result
            read = cst_walk.variables(node)
            late = [n for n in read if any(j > index for j in later_setup.get(n, []))]
            passed = calls.passed_function(node.func.value) if type(node) is cst.Call and type(node.func) is cst.Name else None
            if read & calls.loop and passed not in (None, graph_callables.NOT_A_PARAMETER):
                result.blocker = (
                    f"`{code(node)}` was evaluated once, when the pipeline was built, on "
                    f"`{sorted(read & calls.loop)[0]}`, which the converted loop computes every iteration; calling "
                    f"`{node.func.value}` every iteration instead is the same only where it is arithmetic of its "
                    f"arguments alone, but {passed}: convert by hand")
                return result
            if read & calls.loop or late:
                result.blocker = (
                    f"`{code(node)}` was evaluated once, when the pipeline was built, but reads "
                    f"`{sorted(read & calls.loop or set(late))[0]}`, which the converted loop computes every iteration: convert by hand")
                return result
            is_read = type(node) in (cst.Attribute, cst.Subscript)
            if is_read and code(node) in known and not read & calls.changed:
                result.replace[id(node)] = cst.Name(known[code(node)])  # (read already, into that name)
                continue
            name = fresh_name(_base_name(node, stmt), avoid)
            taken.add(name)
            if is_read:
                known[code(node)] = name
            result.replace[id(node)] = cst.Name(name)
            assign = assignment(name, node)
            result.before.setdefault(index, []).append(assign)
        if not info.conditionals and not isinstance(stmt, (cst.SimpleStatementLine, cst.BaseExpression)):
            # (after the condition's calls: the `if` run before the loop tests their names)
            result.blocker = _compound_reads(stmt, index, calls, result, avoid, taken, later_setup, known)
            if result.blocker is not None:
                return result
    first = min(result.before, default=None)
    if first is not None:
        head = result.before[first][0]
        result.before[first][0] = head.with_changes(leading_lines=[cst.EmptyLine(
            comment=cst.Comment("# evaluated once, as when the pipeline was built"))])
    return result


def _compound_reads(stmt, index: int, calls: _Calls, result: Plan, avoid: set, taken: set, later_setup: dict,
                    top_known: dict) -> Optional[str]:
    """Reads of a parameter's attributes and items (``cfg.size``) in a compound statement of the
    loop, read once as when the pipeline was built, or why they cannot be.

    The pipeline ran an ``if`` of its function once: its condition then, and the statements of the
    branch it took. So the reads in the branches are made before the loop under the same ``if``
    (its condition's own reads first, into names the loop's ``if`` tests too), each into a name
    that the loop reads instead; a branch that did not run leaves its names unbound, and the loop
    does not take that branch either. A ``for``, ``while``, ``with`` or ``try`` of the loop ran its
    statements any number of times, or once, at build time: reads there stop the conversion."""

    def reads_in(node) -> tuple:
        """(reads evaluated wherever ``node`` runs, reads evaluated only where a condition holds)."""
        found: list = []
        _collect(cst.Expr(node) if isinstance(node, cst.BaseExpression) else node, calls, [], reads=found)
        maybe = _evaluated_conditionally(node)
        return [r for r in found if id(r) not in maybe], [r for r in found if id(r) in maybe]

    class _Blocked(Exception):
        pass

    # what an enclosing part (or the loop's top level before) already read into a name, where the
    # pipeline's code cannot have changed it in between (`if cfg.size > 16:` then
    # `resize_x=cfg.size // 2` read the same value); what the `if` adds is its own
    known: dict = dict(top_known)

    def hoist(read, where) -> list:
        read_vars = cst_walk.variables(read)
        late = [n for n in read_vars if any(j > index for j in later_setup.get(n, []))]
        if late:
            raise _Blocked(f"`{code(read)}` was read once, when the pipeline was built, but reads `{late[0]}`, "
                           "which the converted loop computes every iteration: convert by hand")
        spelled = code(read)
        same = not read_vars & calls.changed
        if spelled in known and same:
            result.replace[id(read)] = cst.Name(known[spelled])
            return []
        if spelled in named and same:
            name = named[spelled]  # (the name another branch reads it into: one of them runs)
        else:
            name = fresh_name(_base_name(read, where), avoid)
            taken.add(name)
            named[spelled] = name
        known[spelled] = name
        result.replace[id(read)] = cst.Name(name)
        return [assignment(name, read)]

    named: dict = dict(top_known)  # every read's name so far, bound on this path or not

    def scoped(make, *args) -> tuple:
        """(``make(*args)``, what it read into names), those names known only inside it (a branch's own)."""
        outer = dict(known)
        try:
            return make(*args), dict(known)
        finally:
            known.clear()
            known.update(outer)

    def as_replaced(expr):
        class _Sub(cst.CSTTransformer):
            def on_leave(self, original, updated):
                return result.replace.get(id(original), updated)
        return expr.visit(_Sub())

    def body(stmts: list) -> list:
        out: list = []
        for sub in stmts:
            if type(sub) is cst.If:
                out.extend(if_before_loop(sub))
            elif type(sub) is cst.SimpleStatementLine:
                sure, _ = reads_in(sub)  # (conditional ones are left as the loop's simple statements leave them)
                for r in sure:
                    out.extend(hoist(r, sub))
            else:
                refuse(sub)
        return out

    def refuse(sub) -> None:
        sure, maybe = reads_in(sub)
        if sure or maybe:
            where = stmt if type(sub) is cst.For and type(stmt) is cst.For and sub.body is stmt.body else sub
            raise _Blocked(
                f"`{code((sure or maybe)[0])}` was read once, when the pipeline was built; here it is inside "
                f"`{code(where).splitlines()[0].strip()}`, which the converted loop runs every iteration: read it "
                "once before the pipeline by hand")

    def if_before_loop(node: cst.If) -> list:
        sure, _ = reads_in(node.test)
        first = [line for r in sure for line in hoist(r, node)]
        taken_branch, known_then = scoped(body, list(node.body.body))
        orelse = node.orelse
        if type(orelse) is cst.If:
            other, known_else = scoped(if_before_loop, orelse)
        elif type(orelse) is cst.Else:
            other, known_else = scoped(body, list(orelse.body.body))
        else:
            other, known_else = [], dict(known)
        # what both sides read into the same name is bound after the `if`, whichever ran
        known.update({k: v for k, v in known_then.items() if known_else.get(k) == v})
        if not taken_branch and not other:
            return first
        return [*first, cst.If(
            test=as_replaced(node.test),
            body=cst.IndentedBlock(taken_branch or [cst.SimpleStatementLine([cst.Pass()])]),
            orelse=cst.Else(cst.IndentedBlock(other)) if other else None,
        )]

    lines: list = []
    try:
        if type(stmt) is cst.If:
            lines = if_before_loop(stmt)
        elif type(stmt) is cst.For and stmt.orelse is None:
            # its iterable is evaluated once per iteration, as the pipeline did once; its body
            # ran once per element: what it reads may depend on the element
            sure, _ = reads_in(stmt.iter)
            refuse(stmt.with_changes(iter=cst.Name("_")))
            lines = [line for r in sure for line in hoist(r, stmt)]
        else:
            refuse(stmt)
    except _Blocked as e:
        return str(e)
    if lines:
        result.before.setdefault(index, []).extend(lines)
    top_known.update(known)  # (bound on every path through the statement: later ones read them)
    return None


def _opaque_data(info, calls: _Calls) -> Optional[str]:
    """Why the pipeline cannot be converted if it uses as DALI data (an operator's input, the
    receiver of ``.gpu()``, an output) a value from a call dali-migrate cannot see into.

    ``jpegs, labels = make_reader(path)`` with ``make_reader`` imported from another module runs
    once in both forms; when it makes DALI operators (a plugin's reader, another module's
    helper), the pipeline ran them every iteration, while the converted loop would reuse the one
    result it got before the loop."""
    from dali_migrate.pipeline_analysis import _assigned_names

    def moved(node) -> bool:  # images.gpu(): DALI data's own method, where the data is looked at
        func = node.func
        return type(func) is cst.Attribute and func.attr.value in ("gpu", "cpu") and not node.args

    def opaque(node) -> bool:
        return (type(node) is cst.Call and not moved(node) and not calls.is_dali(node)
                and not calls.same_every_time(node))

    origin: dict = {}  # a name set before the loop -> the call its value may come from
    for i in sorted(info.setup):
        if i in info.reader_indices:
            continue
        stmt = info.statements[i]
        source = next((n for n in cst_walk.walk(stmt, not_into=_SCOPES) if opaque(n)), None)
        if source is None:
            read = sorted(cst_walk.variables(stmt) & origin.keys())
            source = origin[read[0]] if read else None
        for name in _assigned_names(stmt):
            if source is not None:
                origin[name] = source
            elif type(stmt) is cst.SimpleStatementLine:
                origin.pop(name, None)  # bound again to a value of its own

    def why(node) -> Optional[str]:
        """The reason if the data ``node`` computes may hold such a value. A DALI call's own
        arguments are not its data (an operator's inputs are looked at as its own)."""
        stack = [node]
        while stack:
            sub = stack.pop()
            tp = type(sub)
            if tp in _SCOPE_TYPES:
                continue
            if tp is cst.Call:
                if opaque(sub) and not cst_walk.variables(sub) & calls.loop:
                    # (one that reads data of the loop is stopped by plan() with its own reason)
                    return f"`{one_line(sub)}`, which dali-migrate cannot see into,"
                if not moved(sub) and calls.is_dali(sub):
                    continue
            elif tp is cst.Name and sub.value in origin:
                return f"`{sub.value}`, which comes from `{one_line(origin[sub.value])}` that dali-migrate cannot see into,"
            elif tp is cst.Attribute:
                stack.append(sub.value)  # not the attribute's name
                continue
            stack.extend(cst_walk.children(sub))
        return None

    used = []  # (data, where it is used)
    for call, op in info.op_calls:
        if op.fn_name not in _OWN_ARGUMENTS:
            used.extend((arg.value, call) for arg in call.args if arg.keyword is None)
    not_data: set = set()  # `boxes(...).cpu().numpy()`: a DataNode has no numpy(), so this is not DALI data
    for stmt in info.statements:
        for sub in cst_walk.walk(stmt, not_into=_SCOPES):
            if type(sub) is cst.Call and moved(sub):
                used.append((sub.func.value, sub))
            elif (type(sub) is cst.Attribute and type(sub.value) is cst.Call and moved(sub.value)
                    and sub.attr.value not in DATA_NODE_ATTRS):
                not_data.add(id(sub.value))
    used = [(data, where) for data, where in used if id(where) not in not_data]
    if info.returned is not None:
        used.append((info.returned, info.returned))
    for data, where in used:
        what = why(data)
        if what is not None:
            return (
                f"{what} is DALI data here (`{one_line(where)}`): if it makes DALI operators (a reader of "
                "another module, a plugin's), the pipeline ran them every iteration, while the converted "
                "loop would reuse the one result it got before the loop; convert by hand")
    return None


def _collect_expr(expr, calls: _Calls) -> list:
    """The outermost volatile calls in ``expr``, ``expr`` itself included."""
    out: list = []
    _collect(cst.Expr(expr), calls, out)
    return out


def _collect(node, calls: _Calls, out: list, skip_tests: bool = False, reads: Optional[list] = None) -> None:
    """The outermost volatile calls (or comprehensions holding one) under ``node``; with
    ``reads``, the outermost reads of a parameter's attributes and items there (``cfg.size``)."""
    test = node.test if skip_tests and type(node) in (cst.If, cst.While) else None
    for child in cst_walk.children(node):
        if test is not None and child is test:
            continue  # a condition of a conditionals pipeline: rules/conditionals.py's
        tp = type(child)
        if reads is not None and (tp is cst.Attribute or tp is cst.Subscript) and calls.argument_read(child):
            reads.append(child)
            continue
        if tp in _SCOPE_TYPES:
            continue  # a lambda's or nested function's body runs when it is called, in both forms
        if tp in _COMPREHENSION_TYPES:
            if calls.volatile(child):
                out.append(child)  # as a whole: its calls run once per element
            continue
        if tp is cst.Call:
            op = calls.names.fn_op(child.func)
            if op == "external_source":
                # its rule decides when the source is called; dtype=, layout=... were read once
                for arg in child.args:
                    if not _is_source(arg, child):
                        _collect(arg, calls, out, skip_tests, reads)
                continue
            if op in _OWN_ARGUMENTS:
                continue  # their rules decide when the function is called
            if not calls.is_dali(child) and not calls.same_every_time(child):
                out.append(child)
                continue
            if reads is not None and type(child.func) is cst.Attribute:
                # cfg.get(...): a method of the argument, not a read of it (the call is the question)
                _collect(child.func.value, calls, out, skip_tests, None)
                for arg in child.args:
                    _collect(arg, calls, out, skip_tests, reads)
                continue
        _collect(child, calls, out, skip_tests, reads)


def _evaluated_conditionally(stmt) -> set:
    """ids of the nodes of ``stmt`` that Python evaluates only where a condition holds: the
    branches of ``x if c else y`` and the right operand of ``and`` / ``or``."""
    out: set = set()
    for node in cst_walk.walk(stmt if not isinstance(stmt, cst.BaseExpression) else cst.Expr(stmt)):
        tp = type(node)
        parts = (node.body, node.orelse) if tp is cst.IfExp else (node.right,) if tp is cst.BooleanOperation else ()
        for part in parts:
            out.update(id(n) for n in cst_walk.walk(part))
    return out


def _is_source(arg: cst.Arg, call: cst.Call) -> bool:
    """Is ``arg`` the source of ``fn.external_source`` (``source=``, or its first positional argument)?"""
    if arg.keyword is not None:
        return arg.keyword.value == "source"
    return arg is call.args[0] or arg.star != ""


def _base_name(node, stmt) -> str:
    """``angle`` for ``fn.rotate(x, angle=<call>)``; ``size`` for a read of ``cfg.size`` (or
    ``cfg.size[0]``), wherever it is (one name serves every place that reads it); else ``value``."""
    read = node
    while type(read) is cst.Subscript:
        read = read.value
    if type(read) is cst.Attribute:
        return read.attr.value
    for sub in cst_walk.walk(stmt, not_into=_SCOPES):
        if type(sub) is cst.Arg and sub.keyword is not None and (
            sub.value is node
            # one value of a list, as fn.external_source(dtype=[...]) takes per output
            or type(sub.value) in (cst.List, cst.Tuple) and any(e.value is node for e in sub.value.elements)
        ):
            return sub.keyword.value
    return "value"
