"""Legacy pipeline forms rewritten, in memory, as the equivalent ``@pipeline_def`` function, so
the one conversion path handles them:

- ``pipe = Pipeline(...)`` followed by ``with pipe:`` ... ``pipe.set_outputs(...)``;
- ``class P(Pipeline)`` with ``ops.X(...)`` members made in ``__init__`` and called in
  ``define_graph``; values ``__init__`` keeps on ``self`` (``self.iterator = iter(self.data)``)
  become locals, nodes ``define_graph`` keeps on ``self`` too.

A class may also define ``iter_setup``, which a pipeline runs before every iteration: where it
draws a batch and ends by feeding each of define_graph's ``ExternalSource`` nodes once
(``self.feed_input(self.jpegs, images, layout="HWC")``, in a row, or at the end of a ``try:``
whose handlers re-raise), its statements become the start of every iteration of the converted
loop, inside ``try: ... except StopIteration: return`` (a StopIteration from iter_setup made
``pipe.run()`` raise it), and each fed node becomes ``ndd.batch(<the batch fed>, layout=...)``
(a copy, as feed_input makes one; ``ndd.as_batch`` where the operator has ``no_copy=True``).
The layout is feed_input's or the operator's (DALI rejects two different ones). The iteration
draws when ``next()`` asks for its batch, not ``prefetch_queue_depth`` batches ahead: the same
batches, so an iterator that other code of the file uses too (a module-level one) is left to a
person. ``self.batch_size`` / ``self.max_batch_size`` / ``self.device_id`` are the settings;
``self.<value>`` that iter_setup assigns is the loop's local (define_graph must not read it: a
pipeline reads it once).

``__init__`` may choose operators under an ``if``/``elif``/``else`` on values (``if dali_cpu:``):
its plain statements stay in their ``if`` at the start of the function, and define_graph's call
of a member made there becomes an ``if`` on the same condition, the branch's operator in each
branch (only the chosen branch's operator runs, as only it existed in the pipeline); inside
define_graph's own ``if`` (or ``x if cond else y``) on that condition, or on a value each branch
stores as a literal (``self.dali_device == "gpu"``), the call is that branch's operator. The
condition is evaluated again, so it may only read values (no calls), never set again later; a
member missing from a branch where define_graph may call it, nested ``if``s setting members and
statements calling operators of two such ``if``s are left to a person.

A subclass of such a class in the same file (``class B(A)``, any depth) is converted with its base
folded in: ``super().__init__(...)`` (or ``super(B, self)`` / ``A.__init__(self, ...)``) is
replaced by A's ``__init__`` with the arguments in place of its parameters (names and literals
only), ``x = super().define_graph()`` by A's graph, and methods B does not define are A's. A
class that stays a class keeps its bases classes too.

A name define_graph binds that __init__'s code also spells (``resize = self.rand_resize()`` beside
``ops.Uniform(range=[resize, ...])`` and the parameter ``resize``) takes a new name in define_graph's
statements (``resize_2``), everywhere it spells it: in the one function, the operators' arguments
and __init__'s code read what they read before. Not where a lambda or inner function of define_graph
spells it too, or it is declared global.

Other methods that these call on self as statements of their own (``return
self.base_define_graph(images, labels)``) are inlined; methods nothing calls (``__len__``) go with
the class; a class without define_graph whose subclasses all convert is folded into them and goes
(see "other methods" below).

Left to a person (marker on the class): methods overriding Pipeline's own or Python's other dunder
methods, a method called inside an expression, class attributes, ``*args``/``**kwargs``
passed to the base, feeds under a condition or followed by more code, iter_setup returning early.

The rewritten form is only a step: the engine keeps it only if the synthesized pipeline then
converts completely; otherwise the original code stays as it was, with markers.
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
from typing import Optional

import libcst as cst
from dali_migrate import match as m

from dali_migrate import cst_walk, helper_hoisting
from dali_migrate.cst_util import assignment, attr_chain, code, first_line, fresh_name, kwarg, map_branches, names_in, one_line
from dali_migrate.dali_imports import PIPELINE_CLASS

#: decorator name of a synthesized pipeline (never written out: conversion replaces it)
SYNTHETIC_DECORATOR = "__dali_migrate_pipeline__"
#: stands for nvidia.dali.fn in synthesized operator calls
SYNTHETIC_FN = "__dali_migrate_fn__"

# Pipeline.__init__'s positional parameters, in order.
_PIPELINE_POSITIONAL = (
    "batch_size", "num_threads", "device_id", "seed", "exec_pipelined", "prefetch_queue_depth",
    "exec_async", "bytes_per_sample", "set_affinity", "max_streams", "default_cuda_stream_priority",
)


@dataclasses.dataclass
class Legacy:
    name: str  # the synthesized pipeline function's name
    kind: str  # "with" or "class"
    anchor: cst.CSTNode  # original node to mark if the conversion does not go through
    reason: str = ""  # set when it cannot even be rewritten as a pipeline
    #: the ``with pipe:`` statement of a "with" pipeline: notebooks repeat the very same
    #: ``pipe = Pipeline(...)`` line for each pipeline, their graphs tell them apart
    block: Optional[cst.CSTNode] = None

    def find_anchor(self, module: cst.Module, taken: frozenset = frozenset()):
        """The anchor's counterpart in ``module`` (transformers rebuild nodes, so not by identity).
        ``taken``: ids of counterparts already given to other pipelines written the very same way
        (two functions that each make `pipe` with the same lines), passed over."""
        from dali_migrate import cst_walk

        # (statements hold no statement in their expressions: only blocks are gone into)
        if isinstance(self.anchor, cst.ClassDef):
            for n in cst_walk.walk(module, not_into=_NO_STATEMENTS):
                if type(n) is cst.ClassDef and n.name.value == self.name:
                    return n
            return None
        # the same text; deep_equals first, which gives up at the first difference, where
        # generating every statement's code did not; before it, a look at the line's first
        # statement and target, which tells most lines of a file apart for much less
        first = None
        like = _looks_like(self.anchor)
        for n in cst_walk.walk(module, not_into=_NO_STATEMENTS):
            if type(n) is cst.SimpleStatementLine and id(n) not in taken and like(n) and n.deep_equals(self.anchor):
                if self.block is None:
                    return n
                first = first or n
            elif self.block is not None and type(n) in (cst.Module, cst.IndentedBlock):
                body = list(n.body)
                for k, stmt in enumerate(body):
                    if type(stmt) is cst.SimpleStatementLine and id(stmt) not in taken and like(stmt) and stmt.deep_equals(self.anchor):
                        var = _holder_name(self.anchor.body[0].targets[0].target) or ""
                        block = next((s for s in body[k + 1 :] if _with_block(s, var)), None)
                        if block is not None and block.deep_equals(self.block):
                            return stmt
        return first


_NO_STATEMENTS = (cst.BaseExpression, cst.BaseSmallStatement)


def _looks_like(anchor: cst.SimpleStatementLine):
    """A test that every line equal to ``anchor`` passes (a line that fails it cannot be equal):
    as many statements, the first of the same type, and for an assignment the same target."""
    first = anchor.body[0]
    tp, n = type(first), len(anchor.body)
    target = None
    if tp is cst.Assign and len(first.targets) == 1 and type(first.targets[0].target) is cst.Name:
        target = first.targets[0].target.value

    def like(line: cst.SimpleStatementLine) -> bool:
        if len(line.body) != n or type(line.body[0]) is not tp:
            return False
        if target is None:
            return True
        targets = line.body[0].targets
        return len(targets) == 1 and type(targets[0].target) is cst.Name and targets[0].target.value == target

    return like


def _kwargs_from_pipeline_call(call: cst.Call) -> Optional[list]:
    """Pipeline(...) arguments as keyword arguments (None: *args/**kwargs, cannot tell)."""
    out = []
    pos = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            if pos >= len(_PIPELINE_POSITIONAL):
                return None
            out.append(cst.Arg(keyword=cst.Name(_PIPELINE_POSITIONAL[pos]), value=arg.value, equal=_EQ))
            pos += 1
        else:
            out.append(arg.with_changes(comma=cst.MaybeSentinel.DEFAULT))
    return out


_EQ = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))


def _decorator(kwargs: list) -> cst.Decorator:
    return cst.Decorator(decorator=cst.Call(func=cst.Name(SYNTHETIC_DECORATOR), args=kwargs))


def _return(values: list) -> cst.SimpleStatementLine:
    if len(values) == 1:
        value = values[0]
    else:
        value = cst.Tuple([cst.Element(v) for v in values], lpar=[], rpar=[])
    return cst.SimpleStatementLine([cst.Return(value)])


# -- with pipe: ----------------------------------------------------------------------------------


def _holder_name(target) -> Optional[str]:
    """What holds a pipeline made as ``<target> = Pipeline(...)``, spelled as the code spells it: a
    variable (``pipe``) or an attribute of one (``self.pipe``, as loader classes keep it); None
    for anything else (``pipes[i]``, ``a.b.c``)."""
    if isinstance(target, cst.Name):
        return target.value
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
        return f"{target.value.value}.{target.attr.value}"
    return None


def _holder(var: str):
    """The matcher for the holder ``var`` (:func:`_holder_name`)."""
    base, dot, attr = var.partition(".")
    return m.Attribute(value=m.Name(base), attr=m.Name(attr)) if dot else m.Name(var)


def _stem(var: str) -> str:
    """The holder's last name, to name what is made from it (``self.pipe`` -> ``pipe``)."""
    return var.rpartition(".")[2]


def _mentions_holder(var: str, *stmts) -> bool:
    if "." not in var:
        return var in read_names(*stmts)
    pattern = _holder(var)
    return any(type(n) is cst.Attribute and m.matches(n, pattern) for s in stmts for n in cst_walk.walk(s))


def _pipeline_assign(stmt, names) -> Optional[tuple]:
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign)):
        return None
    assign = stmt.body[0]
    if len(assign.targets) != 1:
        return None
    var = _holder_name(assign.targets[0].target)
    if var is None:
        return None
    if not isinstance(assign.value, cst.Call) or names.qualify(assign.value.func) not in PIPELINE_CLASS:
        return None
    return var, assign.value


def _with_block(stmt, var: str) -> bool:
    return (
        isinstance(stmt, cst.With)
        and len(stmt.items) == 1
        and m.matches(stmt.items[0].item, _holder(var))
        and stmt.items[0].asname is None
    )


def _is_set_outputs(node, var: str) -> bool:
    """``node`` is the attribute ``<var>.set_outputs``."""
    return m.matches(node, m.Attribute(value=_holder(var), attr=m.Name("set_outputs")))


def _mentions_set_outputs(stmt, var: str) -> bool:
    return any(_is_set_outputs(n, var) for n in cst_walk.walk(stmt))


def _outputs_chosen(inner: list, var: str, names, block: list, taken: set) -> Optional[tuple]:
    """(the ``if`` ending a ``with pipe:`` block, each branch's ``pipe.set_outputs(...)`` made
    ``<held> = <outputs>``; the name ``held``), where that ``if`` has an ``else``, every branch
    ends with ``pipe.set_outputs(...)`` and nothing else of the block names it, and its tests read
    nothing the graph computed and only names and constants (the ``if`` ran once, when the graph
    was defined, and the pipeline's outputs are the taken branch's; the converted loop tests it
    every iteration, and takes the same branch as long as those names are not bound again, which
    the with-graph conversion checks). None otherwise. ``held`` is a name neither ``taken`` nor
    spelled in ``block``, the statements that hold the graph."""
    last = inner[-1]
    if not isinstance(last, cst.If) or any(_mentions_set_outputs(st, var) for st in inner[:-1]):
        return None
    chain = _if_chain(last)
    if chain[-1][0] is not None:
        return None
    for _, body in chain:
        if not body or _set_outputs(body[-1], var) is None or any(_mentions_set_outputs(st, var) for st in body[:-1]):
            return None
    graph: set = set()
    for st in inner[:-1]:
        if _uses_dali(st, names, graph):
            graph |= _bindings(st)
    for test, _ in chain:
        if test is not None and (read_names(test) & graph or any(names.fn_op(c.func) is not None for c in _calls(test))
                                 or _build_time_test(test, names)):
            return None  # (the converted loop tests it every iteration: it must give the graph's answer)
    held = fresh_name(f"{_stem(var)}_outputs", taken | set().union(*(names_in(st) for st in block)))

    def branch(block):
        *rest, final = block.body.body
        value = _return(_set_outputs(final, var)).body[0].value
        line = final.with_changes(body=[cst.Assign([cst.AssignTarget(cst.Name(held))], value)])
        return block.with_changes(body=block.body.with_changes(body=[*rest, line]))

    return map_branches(last, branch), held


def with_pipeline_reason(call: cst.Call, parents) -> Optional[str]:
    """Why ``call`` (a ``Pipeline(...)``) is not converted as a ``with pipe:`` graph
    (:func:`rewrite_with_blocks` takes ``pipe = Pipeline(...)``, a ``with pipe:`` block later in the
    same block of statements, ending with ``pipe.set_outputs(...)`` or followed by it), or None."""
    stmt = parents.statement(call)
    assign = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
    if not (isinstance(assign, cst.Assign) and assign.value is call and len(assign.targets) == 1):
        return None
    target = assign.targets[0].target
    var = _holder_name(target)
    if var is None:
        return (f"the pipeline is kept in `{code(target)}`, neither a variable nor an attribute such as `self.pipe`: "
                f"dali-migrate converts `pipe = Pipeline(...)` with `with pipe:`; make it in a variable first, "
                f"or convert by hand")
    if _kwargs_from_pipeline_call(call) is None:
        return "Pipeline(...) gets *args/**kwargs or positional arguments past the settings: convert by hand"
    block = parents.of(stmt)
    body = list(block.body) if isinstance(block, (cst.Module, cst.IndentedBlock)) else []
    k = next((i for i, s in enumerate(body) if s is stmt), None)
    j = next((i for i in range(k + 1, len(body)) if _with_block(body[i], var)), None) if k is not None else None
    if j is None:
        return f"no `with {var}:` block follows Pipeline(...) in the same block of statements: convert by hand"
    inner = list(body[j].body.body) if isinstance(body[j].body, cst.IndentedBlock) else []
    for s in [*inner, *body[j + 1 : j + 2]]:
        for n in cst_walk.walk(s):
            if (type(n) is cst.Call and _is_set_outputs(n.func, var) and any(a.star or a.keyword for a in n.args)
                    and not _outputs_unpacked(n)):
                return f"`{one_line(n)}`: which outputs it gets cannot be seen (starred or keyword arguments): convert by hand"
    if inner and isinstance(inner[-1], cst.If) and not any(_mentions_set_outputs(s, var) for s in inner[:-1]):
        return (f"{var}.set_outputs(...) is chosen by the `if` that ends the `with {var}:` block; dali-migrate converts "
                f"that only with an `else`, every branch ending with {var}.set_outputs(...), and tests that read names "
                f"and constants only, no DALI data (an attribute such as `args.cuda` may change after the graph is "
                f"defined, while the converted loop tests it every iteration): convert by hand")
    if any(_mentions_set_outputs(s, var) for s in inner):
        return f"{var}.set_outputs(...) is not the last statement of the `with {var}:` block: convert by hand"
    return f"the `with {var}:` block neither ends with {var}.set_outputs(...) nor is followed by it: convert by hand"


def _set_outputs(stmt, var: str) -> Optional[list]:
    if (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and m.matches(stmt.body[0], m.Expr(m.Call(func=m.Attribute(value=_holder(var), attr=m.Name("set_outputs")))))
    ):
        call = stmt.body[0].value
        if _outputs_unpacked(call):
            # `pipe.set_outputs(*out)`: as many outputs as `out` holds when the graph is made; the
            # converted loop makes the same list and gives tuple(out) (pipeline_analysis takes
            # tuple(...) as several outputs)
            return [cst.Call(func=cst.Name("tuple"), args=[cst.Arg(call.args[0].value)])]
        if any(a.star or a.keyword for a in call.args):
            return None
        return [a.value for a in call.args]
    return None


def _outputs_unpacked(call: cst.Call) -> bool:
    """``set_outputs(*out)``: one argument, unpacked from a sequence (not ``**``)."""
    return len(call.args) == 1 and call.args[0].star == "*" and call.args[0].keyword is None


def _calls(node):
    """The calls in ``node``, in pre-order (as ``m.findall(node, m.Call())``, without a visitor's
    rebuilding of every node it passes)."""
    return (n for n in cst_walk.walk(node) if type(n) is cst.Call)


def _self_attrs(node) -> set:
    """Names of the ``self.<name>`` attributes in ``node`` (as ``m.findall(node,
    m.Attribute(value=m.Name("self")))`` finds them, without a visitor's rebuilding of every node
    it passes: each class asks this of every statement of its methods)."""
    return {
        n.attr.value for n in cst_walk.walk(node)
        if type(n) is cst.Attribute and type(n.value) is cst.Name and n.value.value == "self"
    }


def _is_self_attr(node, self_name: str = "self") -> bool:
    """``m.matches(node, m.Attribute(value=m.Name(self_name)))``, by type: asked of every call and
    attribute of a class's methods (a matcher costs ~20x more)."""
    return type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == self_name


def _has_any(node, kinds: tuple) -> bool:
    """Whether ``node`` holds a node of one of the ``kinds`` (``bool(m.findall(...))`` for type matchers)."""
    return any(type(n) in kinds for n in cst_walk.walk(node))


def _uses_dali(stmt, names, graph_names: set) -> bool:
    if names_in(stmt) & graph_names:
        return True
    return any(names.fn_op(c.func) is not None for c in _calls(stmt))


def _bindings(stmt) -> set:
    """Names a statement binds in its own scope: assignments, loops, imports, defs and classes
    (not the locals of a function it defines)."""
    from dali_migrate import cst_walk
    from dali_migrate.pipeline_analysis import _TARGET_OF

    found: set = set()
    for n in cst_walk.walk(stmt, not_into=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        kind = type(n)
        if kind is cst.FunctionDef or kind is cst.ClassDef:
            found.add(n.name.value)
        elif kind is cst.ImportAlias and n.asname is None:
            found.add(code(n.name).split(".")[0])
        elif kind in _TARGET_OF:
            target = getattr(n, _TARGET_OF[kind])
            if target is not None and not isinstance(target, (cst.Attribute, cst.Subscript)):
                found |= names_in(target)
    return found


def _read_before_bound(stmts: list, names: set) -> Optional[str]:
    """The first of ``names`` that ``stmts``, run in order, read before binding it again (None if
    none): a later ``input = fn.external_source()`` of another graph is no read of the first one's
    ``input``. Branches and loop bodies are read as if they ran; a name bound in one branch only
    is still the old one after the branch."""
    live = set(names)
    for stmt in stmts:
        if not live:
            return None
        hit = _reads_first(stmt, live)
        if hit is not None:
            return hit
        if not isinstance(stmt, (cst.If, cst.For, cst.While, cst.Try)):
            live -= _bindings(stmt)
    return None


def _reads_first(stmt, live: set) -> Optional[str]:
    """The first of ``live`` that ``stmt`` reads before it binds it, or None."""
    if isinstance(stmt, cst.SimpleStatementLine):
        for small in stmt.body:
            if isinstance(small, (cst.Assign, cst.AnnAssign)):
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                # `x = ...` only binds x; `x[i] = ...` / `x.a = ...` read x
                reads = read_names(*([small.value] if small.value is not None else []),
                                   *[t for t in targets if not isinstance(t, (cst.Name, cst.Tuple, cst.List))])
            else:
                reads = read_names(small)  # (an AugAssign reads its target too)
            hit = sorted(reads & live)
            if hit:
                return hit[0]
            live = live - _bindings(cst.SimpleStatementLine([small]))
        return None
    if isinstance(stmt, cst.If):
        # each test is read before its branch (an elif's only after the branches above it)
        chain = [([test] if test is not None else [], body) for test, body in _if_chain(stmt)]
    elif isinstance(stmt, (cst.With, cst.For, cst.While)):
        head = [i.item for i in stmt.items] if isinstance(stmt, cst.With) else [
            stmt.iter if isinstance(stmt, cst.For) else stmt.test]
        chain = [(head, list(stmt.body.body))]
        if getattr(stmt, "orelse", None) is not None:
            chain.append(([], list(stmt.orelse.body.body)))
    else:
        chain = None
    if chain is not None:
        inner = live - names_in(stmt.target) if isinstance(stmt, cst.For) else live
        for head, body in chain:
            hit = sorted(read_names(*head) & live)
            if hit:
                return hit[0]
            found = _read_before_bound(body, inner)
            if found is not None:
                return found
        return None
    if isinstance(stmt, cst.FunctionDef):
        # a function reads, when it runs, the names it does not bind itself
        p = stmt.params
        own = _assigned(stmt.body) | {x.name.value for x in [*p.posonly_params, *p.params, *p.kwonly_params]}
        reads = read_names(stmt.body, *stmt.decorators, *[x.default for x in p.params if x.default is not None]) - own
    else:  # a class or a try: anything it reads counts (a handler may run at any point)
        reads = read_names(stmt)
    hit = sorted(reads & live)
    return hit[0] if hit else None


def _changed_anywhere(*stmts) -> set:
    """Variables whose object a line of ``stmts`` (at any depth) changes without binding them:
    ``mean[0] *= 255``, ``axes.append(1)`` (pipeline_analysis._changed_in_place)."""
    from dali_migrate.pipeline_analysis import _changed_in_place

    found: set = set()
    for stmt in stmts:
        for node in cst_walk.walk(stmt):
            if type(node) is cst.SimpleStatementLine:
                found |= _changed_in_place(node)
    return found


def _self_changed_anywhere(*stmts, self_name: str = "self") -> set:
    """self's values that a line of ``stmts`` changes in place: ``self.size[0] = 8``,
    ``self.axes.append(1)``, ``self.cfg.size = 2`` (not ``self.size = ...``, which binds it anew)."""
    from dali_migrate.pipeline_analysis import _MUTATORS

    found: set = set()

    def base_attr(node) -> Optional[str]:
        while isinstance(node, (cst.Subscript, cst.Attribute)):
            if isinstance(node, cst.Attribute) and _is_self_attr(node, self_name):
                return node.attr.value
            node = node.value
        return None

    for stmt in stmts:
        for node in cst_walk.walk(stmt):
            targets = []
            if type(node) is cst.AssignTarget:
                targets = [node.target]
            elif type(node) in (cst.AugAssign, cst.AnnAssign):
                targets = [node.target]
            elif (type(node) is cst.Call and isinstance(node.func, cst.Attribute)
                  and node.func.attr.value in _MUTATORS):
                targets = [node.func.value]
            for t in targets:
                if _is_self_attr(t, self_name) and type(node) is not cst.Call:
                    if type(node) is cst.AugAssign:
                        found.add(t.attr.value)  # self.size += [1]: a list grows in place
                    continue  # (self.size = ...: a new value, not a change of the old one)
                attr = base_attr(t)
                if attr is not None:
                    found.add(attr)
    return found


def _mutated(stmt) -> set:
    """Names whose object a statement may change in place (``x[i] = ...``, ``x.a = ...``, ``x += ...``,
    ``x.append(...)``)."""
    found: set = set()
    for n in cst_walk.walk(stmt):
        kind = type(n)
        if kind is cst.AssignTarget or kind is cst.AugAssign:
            target = n.target
            while isinstance(target, (cst.Attribute, cst.Subscript)):
                target = target.value
            if isinstance(target, cst.Name) and (target is not n.target or kind is cst.AugAssign):
                found.add(target.value)
        elif kind is cst.Call and type(n.func) is cst.Attribute and type(n.func.value) is cst.Name:
            # a method may change its object (`values.append(4)`)
            found.add(n.func.value.value)
    return found


def _makes_dali_node(stmt, names, dali_names: set) -> bool:
    """Does the statement make a DataNode: an operator, a ``types.Constant``, DALI math, or an
    expression of DataNodes made before it?"""
    from dali_migrate.pipeline_analysis import TYPES_CONSTANT

    if read_names(stmt) & dali_names:
        return True

    def dali_call(f) -> bool:
        q = names.qualify(f) or ""
        return names.fn_op(f) is not None or q == TYPES_CONSTANT or q.startswith(("nvidia.dali.ops.", "nvidia.dali.math."))

    return any(dali_call(c.func) for c in _calls(stmt))


def _data_node_makers(out: list, i: int, names) -> list:
    """For each statement before ``out[i]``: whether it makes DataNodes (an operator, a constant,
    or an expression of DataNodes that statements before it made and nothing has bound again)."""
    makes, dali = [], set()
    for stmt in out[:i]:
        bound = _bindings(stmt)
        made = not isinstance(stmt, cst.FunctionDef) and _makes_dali_node(stmt, names, dali)
        dali = (dali | bound) if made else (dali - bound)
        makes.append(made)
    return makes


def _graph_inputs(out: list, i: int, graph: list, names, makes: list):
    """The statements before ``out[i]`` (the ``Pipeline(...)`` line) that make the DataNodes the
    graph reads (a constant made at the top of a notebook), in their order; or why they cannot
    move into the graph (str).

    The synthesized pipeline makes them again on its first iteration instead of where they were
    written, so what they read must not change in between: such names are bound once, before
    them, and not changed in place. ``makes``: :func:`_data_node_makers` of ``out[:i]``."""
    dali_at: dict = {}  # DataNode name -> index in ``out`` of the statement that made it
    for k in range(i):
        for n in _bindings(out[k]):
            if makes[k]:
                dali_at[n] = k
            else:
                dali_at.pop(n, None)
    wanted: set = set()
    todo = [n for n in read_names(*graph) - _assigned(*graph) if n in dali_at]
    while todo:
        k = dali_at[todo.pop()]
        if k in wanted:
            continue
        wanted.add(k)
        todo.extend(n for n in read_names(out[k]) if n in dali_at and dali_at[n] < k)
    for k in sorted(wanted):
        stmt = out[k]
        if not (
            isinstance(stmt, cst.SimpleStatementLine)
            and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Assign)
            and all(isinstance(t.target, (cst.Name, cst.Tuple)) for t in stmt.body[0].targets)
        ):
            needed = read_names(*graph, *(out[w] for w in wanted if w != k))
            what = ", ".join(sorted(n for n in _bindings(stmt) if dali_at.get(n) == k and n in needed))
            return f"the graph uses `{what}`, made before the `with` block by a statement that cannot be moved into it: convert by hand"
        for n in read_names(stmt.body[0].value) - set(dali_at) - set(names.aliases) - _modules_only(out):
            later = [s for s in out[k + 1 :] if n in _bindings(s) or n in _mutated(s)]
            if later or any(n in _mutated(s) for s in out[:k]):
                return (
                    f"the graph uses a DataNode made before the `with` block from `{n}`, which the file changes "
                    "afterwards: the converted pipeline would make it when it first runs; convert by hand"
                )
    return [out[k] for k in sorted(wanted)]


def _modules_only(stmts: list) -> set:
    """Names that only import statements of ``stmts`` bind (``np``): calling their functions
    (``np.array(...)``) does not change what a DataNode made from them holds."""
    imported: set = set()
    other: set = set()
    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine) and all(isinstance(b, (cst.Import, cst.ImportFrom)) for b in stmt.body):
            # (a name `from m import` binds may be any object: only `import m` binds a module)
            for b in stmt.body:
                if isinstance(b, cst.Import):
                    imported |= {a.asname.name.value if a.asname is not None else code(a.name).split(".")[0] for a in b.names}
        else:
            other |= _bindings(stmt)
    return imported - other


def _dead_data_nodes(out: list, i: int, j: int, pre: list, inputs: list, makes: list) -> list:
    """The statements before ``out[i]`` (``Pipeline(...)``) that
    make DataNodes whose every name is made again between ``out[i]`` and the ``with`` block at
    ``out[j]`` (``pre``, moved into the graph) and read by nothing in between (insightface's
    ``condition_flip``, written twice). The pipeline never used them: the conversion drops them.
    ``makes``: :func:`_data_node_makers` of ``out[:i]``."""
    rebound = set().union(*(_bindings(s) for s in pre)) if pre else set()
    found = []
    for k in range(i):
        stmt = out[k]
        bound = _bindings(stmt)
        if not makes[k] or not bound or not bound <= rebound or any(stmt is s for s in inputs):
            continue
        between = [s for s in out[k + 1 : j] if not any(s is p for p in pre)]
        if any(read_names(s) & bound for s in between) or any(_value_reads(p) & bound for p in pre):
            continue  # read before it is made again (or by the line that makes it again)
        if any(n in _bindings(s) for s in out[k + 1 : i] for n in bound):
            continue  # bound again before Pipeline(...): not this graph's business
        found.append(stmt)
    return found


def _value_reads(stmt) -> set:
    """The names a ``name = value`` line reads (its value's); every name of any other statement."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign):
        return read_names(stmt.body[0].value)
    return read_names(stmt)


def _captured_sources(graph: list, out: list, names) -> list:
    """Names given as ``fn.external_source(source=<name>)`` that the block binds more than once
    (a notebook cell redefining ``get_batch``): the pipeline took the one bound when its graph was
    defined, so the synthesized function takes it then too, as a parameter's default value."""
    found = []
    for call in (c for s in graph for c in _calls(s) if names.fn_op(c.func) == "external_source"):
        arg = kwarg(call, "source")
        if arg is None and call.args and call.args[0].keyword is None and not call.args[0].star:
            arg = call.args[0]
        if arg is None or not isinstance(arg.value, cst.Name) or arg.value.value in found:
            continue
        name = arg.value.value
        if name not in _assigned(*graph) and sum(name in _bindings(s) for s in out) > 1:
            found.append(name)
    return found


def captured_def(module: cst.Module, func: cst.FunctionDef, name: str) -> Optional[cst.FunctionDef]:
    """The module-level function that a synthesized pipeline captured as its parameter ``name``
    (see _captured_sources): the file's last top-level ``def name`` before the pipeline, where
    every binding of ``name`` in the file is such a ``def``; else None."""
    if not (func.decorators and m.matches(func.decorators[0].decorator, m.Call(func=m.Name(SYNTHETIC_DECORATOR)))):
        return None
    if not any(p.name.value == name and m.matches(p.default, m.Name(name)) for p in func.params.params):
        return None
    body = list(module.body)
    if func not in body:
        return None
    last = None
    for stmt in body:
        if stmt is func:
            break
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
            last = stmt
    for stmt in body:
        if stmt is func or (isinstance(stmt, cst.FunctionDef) and stmt.name.value == name):
            continue
        if name in _bindings(stmt):
            return None
    return last


def _defined_after(kept: list, var: str, call: cst.Call) -> bool:
    """Can the synthesized pipeline be defined after ``kept``, the statements between
    ``var = Pipeline(...)`` and ``with var:``?

    The graph read their names at the ``with`` statement: defined after them, the pipeline is
    defined where its graph was, and a name they bind is not one bound after the graph
    (call_sites._read_late). Its settings, Pipeline(...)'s arguments, are then evaluated after
    them, so these must not read what they bind or change, nor call anything while they do too
    (a random seed drawn from the generator they draw from); nor may they use the pipeline."""
    if not kept:
        return False
    changed = set().union(*(_bindings(s) | _mutated(s) for s in kept))
    args = [a.value for a in call.args]
    if _mentions_holder(var, *kept) or read_names(*args) & changed:
        return False
    return not (any(True for a in args for _ in _calls(a)) and any(True for s in kept for _ in _calls(s)))


def changed_in_place(module: cst.Module) -> frozenset:
    """Attribute names whose objects the file may change in place: ``x.a[i] = ...``, ``x.a.b = ...``,
    ``x.a += ...``, ``x.a.m(...)`` (any method may change its object), ``del x.a...``."""
    found: set = set()

    def below(target, own: bool) -> None:
        # `own`: the target itself, not something inside it (`x.a = v` rebinds `a`, changes nothing)
        while isinstance(target, (cst.Attribute, cst.Subscript)):
            if isinstance(target, cst.Attribute) and not own:
                found.add(target.attr.value)
            own = False
            target = target.value

    for n in cst_walk.walk(module):
        kind = type(n)
        if kind is cst.AssignTarget or kind is cst.AnnAssign:
            below(n.target, True)
        elif kind is cst.AugAssign:
            below(n.target, False)
        elif kind is cst.Del:
            below(n.target, False)
        elif kind is cst.Call and type(n.func) is cst.Attribute:
            below(n.func.value, False)
    return frozenset(found)


def _snapshot_attributes(var: str, stmts: list, kept: list, before: bool, changed, taken: set,
                         instance: Optional[str] = None):
    """(``stmts`` reading ``<base>.<attr>`` through parameters, [those parameters]) for a graph
    held in an attribute (``var`` is ``self.pipe``: ``self``) or made in a method (``instance``,
    the method's first parameter), or None where the graph's reads of ``self`` cannot all be taken so.

    The pipeline read ``self.<attr>`` once, when its graph was defined; the converted generator's
    loop would read it every iteration, when the object may hold another value (an epoch hook
    that sets ``self.image_size``, a training script that sets ``loader.dither = 0``). A parameter
    whose default is ``self.<attr>`` is evaluated where the function is defined, where the graph
    was, once. Not taken so: a graph that uses ``self`` other than by reading its attributes
    (passes it on, assigns or calls one, calls a method) or reads it in a function of its own (a
    source's lambda reads it when it runs, in the pipeline too), an attribute whose object the file may
    change in place (``self.anchors.append(...)``: ``changed()``, asked last, as it walks the file),
    and a function defined before statements (``before``: those between ``Pipeline(...)`` and
    ``with``) that change ``self``."""
    base, dot, _ = var.partition(".")
    if not dot:
        base = instance
    if base is None:
        return None
    reads = [n for s in stmts for n in cst_walk.walk(s)
             if type(n) is cst.Attribute and type(n.value) is cst.Name and n.value.value == base]
    if not reads:
        return None
    uses = sum(1 for s in stmts for n in cst_walk.variable_nodes(s) if n.value == base)
    attrs = list(dict.fromkeys(n.attr.value for n in reads))
    if uses != len(reads) or base in set().union(*(_bindings(s) for s in stmts)):
        return None  # `self` itself passed on, or rebound
    if base in set().union(*(_mutated(s) for s in stmts)) or any(
            type(n) is cst.Call and type(n.func) is cst.Attribute and type(n.func.value) is cst.Name
            and n.func.value.value == base for s in stmts for n in cst_walk.walk(s)):
        return None  # the graph assigns one, or calls a method
    if any(type(n) in (cst.Lambda, cst.FunctionDef, cst.ClassDef) and base in cst_walk.variables(n)
           for s in stmts for n in cst_walk.walk(s)):
        return None  # read when the inner function runs (a source's lambda), not when the graph was defined
    if before and base in set().union(*(_mutated(s) | _bindings(s) for s in kept)):
        return None
    if set(attrs) & changed():
        return None
    params, table = [], {}
    for attr in attrs:
        table[attr] = fresh_name(f"{base}_{attr}", taken)
        params.append(cst.Param(cst.Name(table[attr]), default=cst.Attribute(cst.Name(base), cst.Name(attr)), equal=_EQ))
    # (every attribute the graph reads has its parameter: _SelfReads finds each in the table)
    return [_self_reads(s, table, "the graph", base) for s in stmts], params


def rewrite_with_blocks(body: list, names, taken: set, found: list, skip: set,
                        changed=None, instance: Optional[str] = None) -> list:
    """One block's statements with each ``with pipe:`` graph replaced by a synthesized pipeline."""
    out = list(body)
    moved: dict = {}  # id(statement made before a graph and moved into it) -> the statement
    dropped: set = set()  # ids of statements that made DataNodes no graph used
    i = 0
    while i < len(out):
        hit = _pipeline_assign(out[i], names)
        if hit is None:
            i += 1
            continue
        var, call = hit
        j = next((k for k in range(i + 1, len(out)) if _with_block(out[k], var)), None)
        if j is None:
            i += 1
            continue
        with_stmt = written = out[j]  # (`written`: how a marker finds the block again, as the file has it)
        inner = list(with_stmt.body.body) if isinstance(with_stmt.body, cst.IndentedBlock) else []
        outputs = _set_outputs(inner[-1], var) if inner else None
        chosen = _outputs_chosen(inner, var, names, out, taken) if inner and outputs is None else None
        if chosen is not None:
            # `if ...: ...; pipe.set_outputs(a, b) else: ...; pipe.set_outputs(c, d)`: the graph's
            # outputs are what the branch taken when it was defined gave (see _outputs_chosen)
            new_if, held = chosen
            inner = [*inner[:-1], new_if, cst.SimpleStatementLine([cst.Pass()])]
            outputs = [cst.Name(held)]
        after = outputs is None and j + 1 < len(out) and _set_outputs(out[j + 1], var) is not None and not any(
            _mentions_set_outputs(s, var) for s in inner)
        if after:
            # `pipe.set_outputs(...)` right after the block: the graph's outputs all the same
            inner.append(out[j + 1])
            outputs = _set_outputs(out[j + 1], var)
        kwargs = _kwargs_from_pipeline_call(call)
        name = f"{_stem(var)}_batches"
        if name in taken:
            name = f"{_stem(var)}_batches_{len(taken)}"
        # taken even when skipped: the names of the file's other graphs must not change between
        # the engine's passes (a skipped graph's name is how it is recognised in the next one)
        taken.add(name)
        if outputs is None or kwargs is None or name in skip:
            i = j + 1  # (left as written: a skipped graph keeps its set_outputs where it was)
            continue
        if after:
            with_stmt = with_stmt.with_changes(body=with_stmt.body.with_changes(body=inner))
            out[j : j + 2] = [with_stmt]
        # Operator calls between Pipeline(...) and `with` belong to the graph too.
        graph_names: set = set()
        pre, kept = [], []
        for stmt in out[i + 1 : j]:
            if _uses_dali(stmt, names, graph_names):
                pre.append(stmt)
                graph_names |= names_in(stmt)
            else:
                kept.append(stmt)
        graph = [*pre, *inner[:-1], *[cst.Expr(v) for v in outputs]]
        # the graph becomes a function of its own: what its lines bind stays in there
        leaked = _read_before_bound([*kept, *out[j + 1:]], set().union(*(_bindings(s) for s in [*pre, *inner[:-1]])))
        if leaked is not None:
            found.append(Legacy(name=name, kind="with", anchor=out[i], block=written, reason=(
                f"`{leaked}` is bound in the `with {var}:` graph and read after it: converted, the graph is a "
                f"function of its own, where `{leaked}` would stay; bind it before Pipeline(...), or convert by hand"
            )))
            i = j + 1
            continue
        makes = _data_node_makers(out, i, names)
        inputs = _graph_inputs(out, i, graph, names, makes)
        if isinstance(inputs, str):
            found.append(Legacy(name=name, kind="with", anchor=out[i], reason=inputs, block=written))
            i = j + 1
            continue
        captured = _captured_sources([*inputs, *graph], out, names)
        rebound = [n for n in captured if any(n in _bindings(s) for s in kept)]
        if rebound:
            found.append(Legacy(name=name, kind="with", anchor=out[i], block=written, reason=(
                f"`{rebound[0]}`, the external source, is defined again between Pipeline(...) and `with`: convert by hand"
            )))
            i = j + 1
            continue
        for stmt in inputs:
            moved[id(stmt)] = stmt
        # A DataNode the graph never used (made again before it was read) was never run by the
        # pipeline; kept, it would be a pipeline-mode call in converted code: it goes.
        dropped.update(id(dead) for dead in _dead_data_nodes(out, i, j, pre, inputs, makes))
        params = [cst.Param(cst.Name(n), default=cst.Name(n), equal=_EQ) for n in captured]
        leading = list(out[i].leading_lines)
        if captured:
            said = ", ".join(f"`{n}`" for n in captured)
            leading.append(cst.EmptyLine(comment=cst.Comment(
                f"# {said} as defined at this point (the file defines it more than once): the pipeline took it here"
            )))
        stmts = [*inputs, *pre, *inner[:-1], _return(outputs)]
        after_kept = _defined_after(kept, var, call)
        snapshot = _snapshot_attributes(var, stmts, kept, not after_kept, changed or frozenset,
                                        taken, instance)
        if snapshot is not None:
            stmts, taken_attrs = snapshot
            params += taken_attrs
            base = code(taken_attrs[0].default.value)
            leading.append(cst.EmptyLine(comment=cst.Comment(
                f"# the {base}.<name> values the graph reads are taken here, once, as the pipeline read them"
            )))
        func = cst.FunctionDef(
            name=cst.Name(name),
            params=cst.Parameters(params=params),
            body=cst.IndentedBlock(stmts),
            decorators=[_decorator(kwargs)],
            leading_lines=leading,
        )
        assign = out[i].with_changes(
            body=[out[i].body[0].with_changes(value=cst.Call(func=cst.Name(name)))], leading_lines=[cst.EmptyLine(indent=False)]
        )
        found.append(Legacy(name=name, kind="with", anchor=out[i], block=written))
        if after_kept:
            # the lines before Pipeline(...) stay before the first statement, those between go before the function
            first = kept[0].with_changes(leading_lines=out[i].leading_lines)
            func = func.with_changes(leading_lines=[*kept[0].leading_lines, *leading[len(out[i].leading_lines):]])
            out[i : j + 1] = [first, *kept[1:], func, assign]
        else:
            out[i : j + 1] = [func, assign, *kept]
        i += 2 + len(kept)  # the statement after them may be the next Pipeline(...)
    if moved:
        # A statement moved into graphs goes where nothing else of the block reads what it made.
        def reads_elsewhere(stmt) -> bool:
            made = _bindings(stmt)
            return any(
                made & read_names(s)
                for s in out
                if s is not stmt and not (isinstance(s, cst.FunctionDef) and any(b is stmt for b in s.body.body))
            )

        out = [s for s in out if id(s) not in moved or reads_elsewhere(s)]
    return [s for s in out if id(s) not in dropped]


# -- Pipeline subclasses ----------------------------------------------------------------------

#: test of the block that holds a converted class's iter_setup() in its synthesized pipeline
#: (``if __dali_migrate_iter_setup__: ...``): the converted generator runs the block at the start
#: of every iteration and ends where it raises StopIteration (rules/pipeline_def.py)
SYNTHETIC_ITER_SETUP = "__dali_migrate_iter_setup__"
#: keyword of a synthesized ``fn.external_source`` that iter_setup() feeds: the batch it is fed
SYNTHETIC_FEED = "__dali_migrate_feed__"

_METHODS = ("__init__", "define_graph", "iter_setup")
# Pipeline attributes a converted class may read, and the setting each one is.
_SETTING_ATTRS = {"batch_size": "batch_size", "max_batch_size": "batch_size", "device_id": "device_id"}
# Names the converted function takes besides the constructor's parameters.
_SETTINGS = ("batch_size", "num_threads", "device_id", "seed")


class _NotSimple(Exception):
    pass


@dataclasses.dataclass
class _Effective:
    """A class with its base classes from the same file folded in: what its instances run."""

    params: cst.Parameters  # __init__'s, self included
    init: list  # __init__'s statements, a base's __init__ inlined where it is called
    define_graph: Optional[cst.FunctionDef]
    iter_setup: Optional[cst.FunctionDef]
    helpers: dict = dataclasses.field(default_factory=dict)  # the other methods, by name (a subclass's win)


class _Abstract(_NotSimple):
    """The class has no define_graph (nor has a base of the file): a base for other pipelines."""


def _is_docstring(stmt) -> bool:
    # by type, not a matcher: asked of every method's first statement (matchers cost ~20x more)
    return (
        type(stmt) is cst.SimpleStatementLine and len(stmt.body) == 1 and type(stmt.body[0]) is cst.Expr
        and type(stmt.body[0].value) in (cst.SimpleString, cst.ConcatenatedString)
    )


def _body(func: cst.FunctionDef) -> list:
    if not isinstance(func.body, cst.IndentedBlock):
        raise _NotSimple(f"{func.name.value}() is written on one line")
    body = list(func.body.body)
    return body[1:] if body and _is_docstring(body[0]) else body


def read_names(*nodes) -> set:
    """Variables the nodes use (read or bind); not attribute names, keywords or parameters."""
    found: set = set()
    # over cst_walk's children, not a visitor: a libcst visit rebuilds every node it passes
    stack = list(nodes)
    while stack:
        n = stack.pop()
        kind = type(n)
        if kind is cst.Name:
            found.add(n.value)
        elif kind is cst.Attribute or kind is cst.Arg:
            stack.append(n.value)
        elif kind is cst.Param:
            if n.default is not None:
                stack.append(n.default)
        else:
            stack.extend(cst_walk.children(n))
    return found


def _assigned(*nodes) -> set:
    from dali_migrate.pipeline_analysis import _assigned_names

    found: set = set()
    for n in nodes:
        found |= _assigned_names(n)
    return found


class _Rename(cst.CSTTransformer):
    """Variables (Name nodes) -> expressions; attribute, keyword and parameter names stay."""

    def __init__(self, table: dict):
        self.table = table

    def leave_Name(self, original, updated):
        return self.table.get(original.value, updated)

    def leave_Attribute(self, original, updated):
        return updated.with_changes(attr=original.attr)

    def leave_Arg(self, original, updated):
        return updated.with_changes(keyword=original.keyword)

    def leave_Param(self, original, updated):
        return updated.with_changes(name=original.name)


def _rename(nodes: list, table: dict) -> list:
    if not table:
        return list(nodes)
    # a visit rebuilds every node it passes: a node that spells none of the names is kept as it is
    return [n.visit(_Rename(table)) if not table.keys().isdisjoint(cst_walk.names(n)) else n for n in nodes]


def _self_reads(node: cst.CSTNode, table: dict, what: str, base: str = "self") -> cst.CSTNode:
    """``node`` with :class:`_SelfReads` applied (not visited where it spells no ``base``: a visit
    rebuilds every node it passes)."""
    return node.visit(_SelfReads(table, what, base)) if base in cst_walk.names(node) else node


class _SelfReads(cst.CSTTransformer):
    """``self.<attr>`` (``<base>.<attr>``) -> the local that holds it in the synthesized function."""

    def __init__(self, table: dict, what: str, base: str = "self"):
        self.table, self.what, self.base = table, what, base

    def leave_Attribute(self, original, updated):
        if type(original.value) is cst.Name and original.value.value == self.base:
            local = self.table.get(original.attr.value)
            if local is None:
                raise _NotSimple(f"{self.what} uses {self.base}.{original.attr.value}, which cannot be followed")
            return cst.Name(local, lpar=updated.lpar, rpar=updated.rpar)
        return updated


@dataclasses.dataclass
class _InitIf:
    """An ``if``/``elif``/``else`` of ``__init__`` that chooses operators: ``tests[k]`` (None for
    ``else``) guards ``calls[k]`` ({member: its ops.X(...) call}) and ``names[k]`` (values set)."""

    tests: list
    calls: list
    values: list
    node: cst.If
    bodies: list = dataclasses.field(default_factory=list)  # each branch's statements, but operators
    literals: list = dataclasses.field(default_factory=list)  # each branch's {value: the literal it stores}
    #: a condition that may not give the same answer when evaluated again (``args.dali_fuse_decoder``):
    #: the converted code asks them once, where __init__ did, and keeps which branch ran in ``flag``
    once: bool = False
    flag: Optional[str] = None
    #: {member: branches that set it to None}, for members other branches make an operator of
    #: (``if resample_range is not None: self.coeffs = ops.Uniform(...) else: self.coeffs = None``)
    nones: dict = dataclasses.field(default_factory=dict)


def _if_chain(stmt: cst.If) -> list:
    """[(test or None, body statements)] of an if/elif/else chain."""
    out, node = [], stmt
    while True:
        out.append((node.test, list(node.body.body)))
        if isinstance(node.orelse, cst.If):
            node = node.orelse
        elif isinstance(node.orelse, cst.Else):
            out.append((None, list(node.orelse.body.body)))
            return out
        else:
            return out


def _build_time_test(test, names=None) -> Optional[str]:
    """Why ``test`` might not give the same answer when evaluated again (None: it does, as long as
    the names it reads are not reassigned): only names, attributes of DALI's modules
    (``types.INTERP_CUBIC``), literals, comparisons and boolean operators. An attribute or item
    of anything else (``args.dali_cpu``, ``cfg["cpu"]``) is refused: the converted code reads the
    condition again at every iteration, and the object may have changed since the pipeline was
    built."""
    # (cst_walk does not enter whitespace and punctuation: only the parts of the expression are met)
    allowed = (
        cst.Name, cst.Attribute, cst.Subscript, cst.SubscriptElement, cst.Index, cst.Comparison,
        cst.ComparisonTarget, cst.BooleanOperation, cst.UnaryOperation, cst.Integer, cst.Float,
        cst.SimpleString, cst.ConcatenatedString, cst.Tuple, cst.Element, cst.BaseCompOp,
        cst.BaseBooleanOp, cst.Not,
    )
    nodes = list(cst_walk.walk(test))
    if not all(isinstance(node, allowed) for node in nodes):
        return f"its condition `{code(test)}` does more than read values (it could give another answer when evaluated again)"
    for node in nodes:
        if isinstance(node, cst.Subscript) or (
            isinstance(node, cst.Attribute) and (names is None or names.qualify(node) is None)
        ):
            return (f"its condition `{code(test)}` reads `{code(node)}`, which may have changed since the "
                    "pipeline was built (the converted code evaluates the condition at every iteration)")
    return None


def _init_if(stmt: cst.If, names, self_table: dict) -> _InitIf:
    """An ``if`` of ``__init__`` that assigns self's members, as an _InitIf, or why not."""
    first = first_line(stmt)
    chain = _if_chain(stmt)
    choice = _InitIf(tests=[], calls=[], values=[], node=stmt)
    positions: list = []
    for test, body in chain:
        if test is not None:
            test = _self_reads(test, self_table, f"`{first}`")
            if _build_time_test(test, names):
                choice.once = True
        choice.tests.append(test)
        made, kept, out, literal = {}, {}, [], {}
        placed: dict = {}  # value -> where its assignment is in `out`
        table = dict(self_table)  # what the branch stores on self is a local from there on
        for s in body:
            if "self" not in names_in(s):
                out.append(s)
                continue
            assigned = _member_assign(s)
            if assigned is None:
                if _self_targets(s):
                    inner = first_line(s)
                    raise _NotSimple(f"`{first}` sets members of self in a nested statement ({inner[:60]}): convert by hand")
                # e.g. `if self.dali_device == "gpu" and fp16:` reading what the branch stored
                out.append(_self_reads(s, table, f"`{first}`"))
                continue
            attr, written = assigned
            if attr in made or attr in kept:
                raise _NotSimple(f"`{first}` sets self.{attr} twice in one branch")
            value = _self_reads(written, table, f"self.{attr} = ...")
            if isinstance(written, cst.Call) and names.ops_op(written.func):
                made[attr] = (value, s)
            else:
                kept[attr] = s
                table[attr] = attr
                placed[attr] = len(out)
                out.append(s.with_changes(body=[cst.Assign([cst.AssignTarget(cst.Name(attr))], value)]))
                if m.matches(value, m.SimpleString() | m.Integer() | m.Float() | m.Name("True") | m.Name("False") | m.Name("None")):
                    literal[attr] = value
        choice.calls.append(made)
        choice.values.append(kept)
        choice.bodies.append(out)
        choice.literals.append(literal)
        positions.append(placed)
    # `self.x = None` where another branch makes self.x an operator says "no operator": the loop
    # asks the branch instead (`if self.x is not None:` -> the branch's condition), no value is kept
    made_somewhere = set().union(*choice.calls)
    for k, kept in enumerate(choice.values):
        gone = []
        for attr in sorted(set(kept) & made_somewhere):
            if m.matches(choice.literals[k].get(attr), m.Name("None")):
                del kept[attr], choice.literals[k][attr]
                gone.append(positions[k][attr])
                choice.nones.setdefault(attr, set()).add(k)
        for at in sorted(gone, reverse=True):
            del choice.bodies[k][at]
        read_after = set(choice.nones) & read_names(*choice.bodies[k])
        if read_after:
            # (the branch's own code read what it had just stored, now a local no more)
            raise _NotSimple(f"`{first}` reads self.{sorted(read_after)[0]} after setting it to None: convert by hand")
    return choice


def _literal_truth(test, env: dict) -> Optional[bool]:
    """The value of ``test`` (names, literals, ==, !=, not, and, or) with ``env``'s literal
    values for its names, or None when it is anything else."""
    import ast

    def value(node):
        if isinstance(node, cst.Name) and node.value in env:
            return ast.literal_eval(code(env[node.value]))
        if isinstance(node, (cst.SimpleString, cst.Integer, cst.Float)) or m.matches(node, m.Name("True") | m.Name("False") | m.Name("None")):
            return ast.literal_eval(code(node))
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            return not value(node.expression)
        if isinstance(node, cst.BooleanOperation):
            left = value(node.left)
            if isinstance(node.operator, cst.And):
                return left and value(node.right)
            return left or value(node.right)
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
            op, right = node.comparisons[0].operator, node.comparisons[0].comparator
            if isinstance(op, cst.Equal):
                return value(node.left) == value(right)
            if isinstance(op, cst.NotEqual):
                return value(node.left) != value(right)
        raise ValueError(code(node))

    try:
        return bool(value(test))
    except (ValueError, SyntaxError):
        return None


def _branch_count(choice: _InitIf) -> int:
    """Branches of the chain, the implicit ``else`` (nothing made) included."""
    return len(choice.tests) if choice.tests[-1] is None else len(choice.tests) + 1

def _if_bodies(node: cst.If) -> list:
    """The statements of every branch of an if/elif/else chain."""
    return [s for _, body in _if_chain(node) for s in body]


def _flag_set(flag: str, k: int) -> cst.SimpleStatementLine:
    """``flag = k``: branch ``k`` of a choice asked once ran."""
    return assignment(flag, cst.Integer(str(k)))


def _flag_is(flag: str, ks: list) -> cst.Comparison:
    """``flag == k``, or ``flag in (k1, k2)``: one of branches ``ks`` ran."""
    if len(ks) == 1:
        return cst.Comparison(cst.Name(flag), [cst.ComparisonTarget(cst.Equal(), cst.Integer(str(ks[0])))])
    return cst.Comparison(cst.Name(flag), [cst.ComparisonTarget(
        cst.In(), cst.Tuple([cst.Element(cst.Integer(str(k))) for k in ks]))])


def _flagged(node: cst.If, choice: _InitIf, flag: str) -> list:
    """``node`` (__init__'s ``if``, its operators taken out) with each branch noting in ``flag``
    which it is (``flag = k``), after ``flag = <none ran>`` where there is no ``else``: the
    conditions are asked once, in __init__'s order, and the converted loop tests ``flag``
    (``choice.flag``) instead of asking them again."""
    choice.flag = flag
    k = iter(range(_branch_count(choice)))

    def noted(block: cst.IndentedBlock) -> cst.IndentedBlock:
        body = [s for s in block.body if not m.matches(s, m.SimpleStatementLine([m.Pass()]))]
        return block.with_changes(body=[*body, _flag_set(flag, next(k))])

    def walk(n: cst.If) -> cst.If:
        body = noted(n.body)
        orelse = n.orelse
        if isinstance(orelse, cst.If):
            orelse = walk(orelse)
        elif isinstance(orelse, cst.Else):
            orelse = orelse.with_changes(body=noted(orelse.body))
        return n.with_changes(body=body, orelse=orelse)

    new = walk(node)
    said = cst.EmptyLine(comment=cst.Comment(
        f"# `{flag}`: the branch taken here, once; the pipeline chose its operators when it was made"))
    if choice.tests[-1] is None:
        return [new.with_changes(leading_lines=[*new.leading_lines, said])]
    none = _flag_set(flag, len(choice.tests))
    return [none.with_changes(leading_lines=[*new.leading_lines, said]), new.with_changes(leading_lines=[])]


def _chosen_by_ifexp(stmt, names):
    """``self.x = ops.X(...) if cond else None`` (or another operator for None, either side) as
    the ``if cond: self.x = ops.X(...) else: self.x = None`` it means, which the converted loop
    follows like any ``if`` of __init__ choosing operators (NVIDIA's MXNet ResNet-50 loader:
    ``self.resize = ops.Resize(...) if resize_shp else None``); any other statement as it is."""
    assigned = _member_assign(stmt)
    if assigned is None or type(assigned[1]) is not cst.IfExp:
        return stmt
    chosen = assigned[1]
    sides = (chosen.body, chosen.orelse)

    def makes_op(e) -> bool:
        return type(e) is cst.Call and names.ops_op(e.func) is not None

    if not any(makes_op(e) for e in sides) or not all(makes_op(e) or m.matches(e, m.Name("None")) for e in sides):
        return stmt
    target = stmt.body[0].targets[0].target
    # the statement's comments go with its (first) operator, to where the loop calls it
    first_op = 0 if makes_op(sides[0]) else 1

    def branch(k: int) -> cst.IndentedBlock:
        value = sides[k].with_changes(lpar=[], rpar=[]) if type(sides[k]) is cst.Call else sides[k]
        line = assignment(target, value)
        if k == first_op:
            line = line.with_changes(leading_lines=stmt.leading_lines, trailing_whitespace=stmt.trailing_whitespace)
        return cst.IndentedBlock([line])

    test = chosen.test.with_changes(lpar=[], rpar=[]) if chosen.test.lpar else chosen.test
    return cst.If(test=test, body=branch(0), orelse=cst.Else(branch(1)))


def _member_assign(stmt) -> Optional[tuple]:
    """(member, value) where ``stmt`` is ``self.<member> = <value>`` alone."""
    small = stmt.body[0] if type(stmt) is cst.SimpleStatementLine and len(stmt.body) == 1 else None
    if type(small) is cst.Assign and len(small.targets) == 1 and _is_self_attr(small.targets[0].target):
        return small.targets[0].target.attr.value, small.value
    return None


def _defaults_folded(body: list, names) -> list:
    """``self.x = <default>`` followed by an ``if`` of __init__ that sets self.x in some of its
    branches (MLPerf's SSD: ``self.g_slice = None``, then ``if dali_cache > 0 and use_nvjpeg:
    ... self.g_slice = ops.Slice(...)``) as the ``if`` alone, the default set in the branches that
    do not set their own (an ``else`` added where there is none): the same member in every case,
    which the converted loop follows like any ``if`` choosing operators.

    Only where that changes nothing else: the default is an operator whose arguments call nothing
    (making it had no effect but the object) or None; nothing between the two, nor the ``if``'s
    conditions or branches, reads self.x; the default's variables are not bound again on the way."""
    out = list(body)
    for original in [stmt for stmt in body if type(stmt) is cst.If]:
        stmt = original
        for attr in sorted({a for _, branch in _if_chain(stmt) for s in branch if (a := _member_name(s))}):
            j = next(k for k, s in enumerate(out) if s is stmt)
            folded = _fold_default(out, j, attr, names)
            if folded is not None:
                out, stmt = folded
    return out


def _member_name(stmt) -> Optional[str]:
    assigned = _member_assign(stmt)
    return assigned[0] if assigned is not None else None


def _fold_default(out: list, j: int, attr: str, names) -> Optional[tuple]:
    """(``out`` with the last ``self.<attr> = <default>`` before ``out[j]``, an ``if``, moved into
    its branches that do not set self.<attr>, that ``if`` as rebuilt) where :func:`_defaults_folded`
    allows it, else None."""
    stmt = out[j]
    i = next((k for k in range(j - 1, -1, -1) if _member_name(out[k]) == attr), None)
    if i is None:
        return None
    default = out[i]
    value = _member_assign(default)[1]
    if not (m.matches(value, m.Name("None")) or (
            type(value) is cst.Call and names.ops_op(value.func) is not None
            and not any(type(n) is cst.Call for a in value.args for n in cst_walk.walk(a.value)))):
        return None
    between = out[i + 1 : j]
    chain = _if_chain(stmt)
    if any(attr in _self_attrs(n) for n in [*between, *(t for t, _ in chain if t is not None)]):
        return None
    # each branch sets self.<attr> on a line of its own, from a value that does not read it, or
    # leaves it alone
    for _, branch in chain:
        for s in branch:
            mine = _member_name(s) == attr
            if attr in _self_attrs(_member_assign(s)[1] if mine else s):
                return None
    if read_names(default) & (_assigned(*between) | _changed_anywhere(*between)):
        return None
    copy = default.with_changes(leading_lines=[])
    bodies = [b if any(_member_name(s) == attr for s in b) else [copy, *b] for _, b in chain]
    if chain[-1][0] is not None:
        bodies.append([copy])  # (no branch ran: the default stays)
    new = _rebuilt_chain(stmt, bodies)
    new = new.with_changes(leading_lines=[*default.leading_lines, *new.leading_lines])
    return [*out[:i], *between, new, *out[j + 1 :]], new


def _rebuilt_chain(node: cst.If, bodies: list) -> cst.If:
    """``node`` (an if/elif/else chain) with each branch's statements from ``bodies``, in order;
    one more body than the chain has branches becomes its ``else``."""
    body = node.body.with_changes(body=bodies[0])
    orelse = node.orelse
    if type(orelse) is cst.If:
        orelse = _rebuilt_chain(orelse, bodies[1:])
    elif type(orelse) is cst.Else:
        orelse = orelse.with_changes(body=orelse.body.with_changes(body=bodies[1]))
    elif len(bodies) > 1:
        orelse = cst.Else(cst.IndentedBlock(bodies[1]))
    return node.with_changes(body=body, orelse=orelse)


def _has_member(test) -> Optional[str]:
    """``member`` where ``test`` is ``hasattr(self, "member")`` (dali-pytorch's ``if hasattr(self,
    'color'):``, asking whether __init__'s ``if`` made that operator), else None."""
    if not (type(test) is cst.Call and m.matches(test.func, m.Name("hasattr")) and len(test.args) == 2
            and m.matches(test.args[0].value, m.Name("self")) and isinstance(test.args[1].value, cst.SimpleString)
            and all(a.keyword is None and not a.star for a in test.args)):
        return None
    return test.args[1].value.evaluated_value


def _member_asked(test) -> Optional[tuple]:
    """(member, what) where ``test`` asks about a member of self alone: ``hasattr(self, "m")``
    ("has"), ``self.m is not None`` or ``self.m`` ("set": an operator object is true),
    ``self.m is None`` ("none"); else None."""
    member = _has_member(test)
    if member is not None:
        return member, "has"
    if _is_self_attr(test):
        return test.attr.value, "set"
    if type(test) is cst.Comparison and len(test.comparisons) == 1 and _is_self_attr(test.left) \
            and m.matches(test.comparisons[0].comparator, m.Name("None")):
        op = test.comparisons[0].operator
        if isinstance(op, cst.IsNot):
            return test.left.attr.value, "set"
        if isinstance(op, cst.Is):
            return test.left.attr.value, "none"
    return None


_OPPOSITE = {cst.Is: cst.IsNot, cst.IsNot: cst.Is, cst.Equal: cst.NotEqual, cst.NotEqual: cst.Equal,
             cst.In: cst.NotIn, cst.NotIn: cst.In}


def _negated(cond):
    """``not cond``, written as the opposite test where there is one (``x is None`` for ``x is not
    None``, ``x`` for ``not x``)."""
    if type(cond) is cst.UnaryOperation and isinstance(cond.operator, cst.Not) and not cond.lpar:
        return cond.expression.with_changes(lpar=[], rpar=[]) if type(cond.expression) is not cst.BooleanOperation else cond.expression
    if type(cond) is cst.Comparison and len(cond.comparisons) == 1 and type(cond.comparisons[0].operator) in _OPPOSITE:
        target = cond.comparisons[0]
        op = target.operator
        return cond.with_changes(lpar=[], rpar=[], comparisons=[target.with_changes(operator=_OPPOSITE[type(op)](
            whitespace_before=op.whitespace_before, whitespace_after=op.whitespace_after))])
    if isinstance(cond, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
        return cst.UnaryOperation(cst.Not(), cond)
    return cst.UnaryOperation(cst.Not(), cond.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]))


def _branch_test(choice: _InitIf, holds: set, asked):
    """The test that holds where one of branches ``holds`` of ``choice`` ran: ``branch in (0, 2)``
    where the branch is noted, else the one condition or its negation (_NotSimple where it
    cannot be written)."""
    every = set(range(_branch_count(choice)))
    if holds == every or not holds:
        return cst.Name("True" if holds else "False")
    if choice.flag is not None:
        return _flag_is(choice.flag, sorted(holds))
    conds = [t for t in choice.tests if t is not None]
    if len(conds) == 1 and holds in ({0}, {1}):
        return conds[0] if holds == {0} else _negated(conds[0])
    raise _NotSimple(f"`{code(asked)}` asks whether one of several branches of __init__ made an operator: convert by hand")


def _flag_tests(choice: _InitIf) -> list:
    """The conditions the converted loop tests for ``choice``'s branches: its own, or ``flag == k``."""
    if choice.flag is None:
        return [t for t in choice.tests if t is not None]
    return [_flag_is(choice.flag, [k]) for k, t in enumerate(choice.tests) if t is not None]


def _expand_choices(graph_body: list, setup_stmts: list, choices: list, chosen: dict, local: dict) -> list:
    """define_graph with each statement that calls an operator __init__ chose under an ``if`` made
    an ``if`` on the same condition, the branch's operator in each branch (inside define_graph's
    own ``if`` on that condition, the operator of that branch); operators are then
    ``self.<synthetic member>``."""
    if set().union(*map(_self_attrs, setup_stmts)) & set(chosen):
        raise _NotSimple("iter_setup uses an operator that __init__ creates under an `if`")
    tests_read = {n for c in choices for t in c.tests if t is not None for n in read_names(t)}
    changed = (_assigned(*graph_body, *setup_stmts) | _self_targets(*graph_body, *setup_stmts)) & tests_read
    if changed:
        raise _NotSimple(
            f"{sorted(changed)[0]} is set again after __init__'s `if` that reads it chose operators "
            "(the condition would not give the same answer where define_graph calls them)"
        )
    def decided(test) -> Optional[tuple]:
        """(choice, {branches where ``test`` holds}) for define_graph's ``if``: the condition of
        one of __init__'s branches spelled the same, a test of values that each branch of one
        ``if`` of __init__ stores as literals (``self.dali_device == "gpu"``) (:func:`truth` adds
        the tests asking whether a member is an operator)."""
        try:
            spelled = _self_reads(test, local, "define_graph")
        except _NotSimple:
            return None
        for gi, c in enumerate(choices):
            for k, t in enumerate(c.tests):
                if t is not None and code(t) == code(spelled):
                    return gi, {k}
        read = read_names(spelled)
        for gi, c in enumerate(choices):
            if not read or not c.literals or not all(read <= set(lit) for lit in c.literals):
                continue
            holds = set()
            for k, lit in enumerate(c.literals):
                value = _literal_truth(spelled, lit)
                if value is None:
                    break
                if value:
                    holds.add(k)
            else:
                return gi, holds
        return None

    def truth(test) -> Optional[tuple]:
        """(choice, {branches where ``test`` holds}, {branches where it does not}) for a test of
        define_graph: :func:`decided`, or a test asking whether a member chosen by an ``if`` of
        __init__ is an operator (:func:`_member_asked`), alone or joined to other tests by
        ``not``, ``and``, ``or`` (what those other tests say is taken as unknown)."""
        hit = decided(test)
        if hit is not None:
            gi, holds = hit
            return gi, holds, set(range(_branch_count(choices[gi]))) - holds
        asked = _member_asked(test)
        if asked is not None and asked[0] in chosen:
            member, what = asked
            gi, branches = chosen[member]
            every = set(range(_branch_count(choices[gi])))
            made, nones = set(branches), choices[gi].nones.get(member, set())
            if what == "has":
                holds = made | nones
            elif made | nones != every:
                return None  # (where __init__ sets no self.<member>, the test raises AttributeError)
            else:
                holds = made if what == "set" else nones
            return gi, holds, every - holds
        if type(test) is cst.UnaryOperation and isinstance(test.operator, cst.Not):
            inner = truth(test.expression)
            return None if inner is None else (inner[0], inner[2], inner[1])
        if type(test) is cst.BooleanOperation:
            left, right = truth(test.left), truth(test.right)
            if (left is None and right is None) or (left and right and left[0] != right[0]):
                return None
            gi = (left or right)[0]
            every = set(range(_branch_count(choices[gi])))
            left, right = left or (gi, every, every), right or (gi, every, every)
            if isinstance(test.operator, cst.And):
                return gi, left[1] & right[1], left[2] | right[2]
            return gi, left[1] | right[1], left[2] & right[2]
        return None

    def asked_as_branches(test, within: Optional[type] = None):
        """``test`` with each part that asks about a chosen member (:func:`_member_asked`) written
        as the test of the branches where it holds (``within``: the kind of expression the part
        is in, for the parentheses it needs there)."""
        asked = _member_asked(test)
        if asked is not None and asked[0] in chosen:
            hit = truth(test)
            if hit is None:
                return test  # (left as it is: the caller finds the member it reads and refuses)
            new = _branch_test(choices[hit[0]], hit[1], test)
            atomic = (cst.Name, cst.Attribute, cst.Call) + ((cst.Comparison,) if within is cst.BooleanOperation else ())
            if within is not None and not isinstance(new, atomic):
                new = new.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            return new
        if type(test) is cst.UnaryOperation and isinstance(test.operator, cst.Not):
            return test.with_changes(expression=asked_as_branches(test.expression, cst.UnaryOperation))
        if type(test) is cst.BooleanOperation:
            return test.with_changes(left=asked_as_branches(test.left, cst.BooleanOperation),
                                     right=asked_as_branches(test.right, cst.BooleanOperation))
        return test

    def members_in(node) -> set:
        return _self_attrs(node) & set(chosen)

    def substitute(node, branch_of: dict):
        class _Sub(cst.CSTTransformer):
            def leave_Attribute(self, original, updated):
                if type(original.value) is cst.Name and original.value.value == "self" and original.attr.value in chosen:
                    attr = original.attr.value
                    gi, branches = chosen[attr]
                    if len(branch_of.get(gi, ())) != 1:
                        return updated  # not decided here (an `x if cond else y` decides only its parts)
                    (k,) = branch_of[gi]
                    if k not in branches:
                        c = choices[gi]
                        where = f"`{code(c.tests[k])}`" if k < len(c.tests) and c.tests[k] is not None else "none of its conditions holds"
                        raise _NotSimple(
                            f"define_graph calls self.{attr}, which __init__ does not create when {where} "
                            "(dali-migrate cannot tell that define_graph does not call it then): convert by hand"
                        )
                    return updated.with_changes(attr=cst.Name(branches[k]))
                return updated

        return node.visit(_Sub())

    def statement(stmt, known: dict) -> cst.BaseStatement:
        used = members_in(stmt)
        if not used:
            return stmt
        if isinstance(stmt, cst.If):
            return graph_if(stmt, known)
        if not isinstance(stmt, cst.SimpleStatementLine):
            raise _NotSimple(f"define_graph calls self.{sorted(used)[0]}, which __init__ creates under an `if`, inside a compound statement")

        class _IfExps(cst.CSTTransformer):
            # mirror = self.coin() if self.data_augmentation else None
            def leave_IfExp(self, original, updated):
                hit = truth(original.test)
                test = asked_as_branches(original.test) if hit is not None else None
                if hit is None or members_in(test):
                    return updated
                gi, holds, fails = hit
                possible = known.get(gi, set(range(_branch_count(choices[gi]))))
                return updated.with_changes(
                    test=test,
                    body=substitute(updated.body, {**known, gi: possible & holds}),
                    orelse=substitute(updated.orelse, {**known, gi: possible & fails}),
                )

        stmt = stmt.visit(_IfExps())
        used = members_in(stmt)
        if not used:
            return stmt
        groups = {chosen[a][0] for a in used if len(known.get(chosen[a][0], ())) != 1}
        if not groups:
            return substitute(stmt, known)
        if len(groups) > 1:
            raise _NotSimple("a statement of define_graph calls operators that several `if`s of __init__ chose: convert by hand")
        gi = groups.pop()
        c = choices[gi]
        ks = list(range(len(c.tests))) + ([] if c.tests[-1] is None else [len(c.tests)])
        bare = stmt.with_changes(leading_lines=[])
        bodies = [cst.IndentedBlock([substitute(bare, {**known, gi: {k}})]) for k in ks]
        orelse = cst.Else(bodies[-1]) if c.tests[-1] is None else None
        conds = _flag_tests(c)
        for k in range(len(conds) - 1, -1, -1):
            node = cst.If(test=conds[k], body=bodies[k], orelse=orelse)
            orelse = node
        return node.with_changes(leading_lines=stmt.leading_lines)

    def graph_if(stmt: cst.If, known: dict) -> cst.If:
        test = asked_as_branches(stmt.test)
        if members_in(test):
            raise _NotSimple("an `if` of define_graph tests an operator __init__ chose under an `if`")
        hit = truth(stmt.test)
        inner, other = dict(known), dict(known)
        if hit is not None:
            gi, holds, fails = hit
            c = choices[gi]
            possible = known.get(gi, set(range(_branch_count(c))))
            inner[gi] = possible & holds
            other[gi] = possible & fails
        body = stmt.body.with_changes(body=[statement(s, inner) for s in stmt.body.body])
        orelse = stmt.orelse
        if isinstance(orelse, cst.If):
            orelse = graph_if(orelse, other)
        elif isinstance(orelse, cst.Else):
            orelse = orelse.with_changes(body=orelse.body.with_changes(body=[statement(s, other) for s in orelse.body.body]))
        return stmt.with_changes(test=test, body=body, orelse=orelse)

    return [statement(s, {}) for s in graph_body]


def _self_targets(*nodes) -> set:
    """Attributes of self that the nodes assign (plainly, augmented, in tuples, as for targets)."""
    found: set = set()

    def target(t):
        if _is_self_attr(t):
            found.add(t.attr.value)
        elif isinstance(t, (cst.Tuple, cst.List)):
            for e in t.elements:
                target(e.value)
        elif isinstance(t, cst.StarredElement):
            target(t.value)

    # read with cst_walk, not a visitor (which rebuilds every node it passes)
    for node in nodes:
        for n in cst_walk.walk(node):
            kind = type(n)
            if kind in _TARGET_HOLDERS:
                target(n.target)
            elif kind is cst.WithItem and n.asname is not None:
                target(n.asname.name)
    return found


_TARGET_HOLDERS = (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For)


def _super_init_args(stmt, base_code: str) -> Optional[list]:
    """The arguments of ``super().__init__(...)``, ``super(Cls, self).__init__(...)`` or
    ``Base.__init__(self, ...)`` when ``stmt`` is that call alone, else None."""
    if not m.matches(stmt, m.SimpleStatementLine([m.Expr(m.Call(func=m.Attribute(attr=m.Name("__init__"))))])):
        return None
    call = stmt.body[0].value
    target = call.func.value
    if isinstance(target, cst.Call) and m.matches(target.func, m.Name("super")):
        if not target.args or (
            len(target.args) == 2 and isinstance(target.args[0].value, cst.Name) and m.matches(target.args[1].value, m.Name("self"))
        ):
            return list(call.args)
        return None
    if code(target) == base_code and call.args and call.args[0].keyword is None and m.matches(call.args[0].value, m.Name("self")):
        return list(call.args[1:])
    return None


def _simple_value(expr) -> bool:
    """Without effects and cheap: may stand wherever a base class's parameter was used."""
    if isinstance(expr, (cst.Name, cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(expr, cst.Attribute):
        return _simple_value(expr.value)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return isinstance(expr.expression, (cst.Integer, cst.Float))
    return False


def _bind(params: cst.Parameters, args: list, own_kwargs: Optional[str] = None) -> dict:
    """{parameter of the base's __init__: what the subclass passes for it, or its default}.

    ``own_kwargs``: the subclass's own ``**kwargs`` parameter. Passed on whole
    (``super().__init__(a, b, **kwargs)``) to a base that takes ``**kwargs`` too, it fills that
    parameter alone: Python has already bound the subclass's named parameters, and every base
    parameter with a name must then be passed by name or position, so no key of the dict can
    reach one of them."""
    where = "super().__init__(...)"
    starred = [a for a in args if a.star]
    base_kwargs = params.star_kwarg.name.value if params.star_kwarg is not None else None
    passes_own = (
        len(starred) == 1 and starred[0].star == "**" and own_kwargs is not None and base_kwargs is not None
        and m.matches(starred[0].value, m.Name(own_kwargs))
    )
    if params.star_arg not in (cst.MaybeSentinel.DEFAULT, None) or (base_kwargs is not None and not passes_own):
        raise _NotSimple("the base class's __init__ takes *args/**kwargs")
    positional = [*params.posonly_params, *params.params][1:]
    every = {p.name.value: p for p in [*positional, *params.kwonly_params]}
    bound: dict = {}
    if starred and not passes_own:
        raise _NotSimple(f"{where} passes *args/**kwargs: which of the base class's parameters they fill cannot be seen, convert by hand")
    args = [a for a in args if not a.star]
    if passes_own:
        bound[base_kwargs] = cst.Name(own_kwargs)
    for i, arg in enumerate(a for a in args if a.keyword is None):
        if i >= len(positional):
            raise _NotSimple(f"{where} passes more arguments than the base class's __init__ takes")
        bound[positional[i].name.value] = arg.value
    for arg in args:
        if arg.keyword is None:
            continue
        key = arg.keyword.value
        if key not in every or key in bound:
            raise _NotSimple(f"{where} passes {key}= twice or to no parameter of the base class's __init__")
        bound[key] = arg.value
    for key, p in every.items():
        if key not in bound:
            if p.default is None or passes_own:
                # (left out, the base's parameter could come from the dict after all)
                raise _NotSimple(f"{where} does not pass the base class's parameter {key}")
            bound[key] = p.default
    for key, value in bound.items():
        if not _simple_value(value):
            raise _NotSimple(f"{where} passes `{code(value)}` for {key}: only names and literals are followed into the base class")
    return bound


def _inline_base_init(init: cst.FunctionDef, base_code: str, base: _Effective) -> list:
    body = _body(init)
    at = [i for i, s in enumerate(body) if _super_init_args(s, base_code) is not None]
    if len(at) != 1:
        raise _NotSimple(f"__init__ does not call {base_code}.__init__(...) exactly once, as a statement of its own")
    i = at[0]
    own_kwargs = init.params.star_kwarg.name.value if init.params.star_kwarg is not None else None
    bound = _bind(base.params, _super_init_args(body[i], base_code), own_kwargs)
    own_params = {p.name.value for p in [*init.params.posonly_params, *init.params.params, *init.params.kwonly_params]}
    if own_kwargs is not None:
        own_params.add(own_kwargs)
    if own_kwargs is not None and own_kwargs in read_names(*bound.values()):
        # the base got a copy of the dict; in one function it is the same dict: neither side
        # may change it or bind the name again
        if own_kwargs in _changed_anywhere(*body, *base.init) or own_kwargs in _assigned(*body, *base.init):
            raise _NotSimple(f"the dict of **{own_kwargs} passed to the base class's __init__ is changed or "
                             "bound again: convert by hand")
    base_locals = _assigned(*base.init)
    if base_locals & set(bound):
        raise _NotSimple("the base class's __init__ assigns to its own parameters")
    if read_names(*bound.values()) & base_locals:
        raise _NotSimple("the base class's __init__ binds a name this class passes to it")
    # In one function, what the base binds would be what this class reads after super().__init__
    after = body[i + 1:]
    clash = base_locals & (own_params | (read_names(*after) - _assigned(*after)))
    if clash:
        first = sorted(clash)[0]
        raise _NotSimple(f"the base class's __init__ binds `{first}`, which this class's __init__ reads after "
                         f"super().__init__(...) as its own: in one function it would read the base's value; "
                         f"rename one of them, or convert by hand")
    # The base's statements must not see this class's variables where they read globals.
    base_free = read_names(*base.init) - base_locals - set(bound) - {"self"}
    if base_free & (own_params | _assigned(*body[:i])):
        raise _NotSimple("the base class's __init__ reads a name that this class's __init__ binds")
    table = {k: v for k, v in bound.items() if not m.matches(v, m.Name(k))}
    return [*body[:i], *_rename(base.init, table), *body[i + 1 :]]


def _super_graph(node) -> bool:
    return m.matches(node, m.Call(func=m.Attribute(value=m.Call(func=m.Name("super")), attr=m.Name("define_graph")), args=[]))


def _inline_base_graph(graph: cst.FunctionDef, base_graph: cst.FunctionDef) -> cst.FunctionDef:
    """``outputs = super().define_graph()`` (or ``return super().define_graph()``) -> the base's graph there."""
    body = _body(graph)
    at = [i for i, s in enumerate(body) if any(type(c.func) is cst.Attribute and c.func.attr.value == "define_graph" for c in _calls(s))]
    if not at:
        return graph
    stmt = body[at[0]]
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
    if len(at) != 1 or not (
        (isinstance(small, cst.Assign) and len(small.targets) == 1 and _super_graph(small.value))
        or (isinstance(small, cst.Return) and _super_graph(small.value))
    ):
        raise _NotSimple("define_graph calls super().define_graph() other than as `outputs = super().define_graph()`")
    base_body = _body(base_graph)
    last = base_body[-1] if base_body else None
    if not (m.matches(last, m.SimpleStatementLine([m.Return()])) and last.body[0].value is not None):
        raise _NotSimple("the base class's define_graph does not end with `return <outputs>`")
    base_stmts, returned = base_body[:-1], last.body[0].value
    if any(_has_any(s, (cst.Return,)) for s in base_stmts):
        raise _NotSimple("the base class's define_graph returns from more than one place")
    before, after = body[: at[0]], body[at[0] + 1 :]
    target = set() if isinstance(small, cst.Return) else _assigned(small)
    if _assigned(*base_stmts) & (read_names(*before, *after) - target) or _assigned(*before) & read_names(*base_body):
        raise _NotSimple("define_graph and the base class's define_graph use the same local names")
    inlined = [stmt.with_changes(body=[small.with_changes(value=returned)])]
    unpacked = _names_of(small.targets[0].target) if isinstance(small, cst.Assign) else None
    if unpacked is not None and unpacked == _names_of(returned):
        inlined = []  # `images, labels = images, labels`
    return graph.with_changes(body=graph.body.with_changes(body=[*before, *base_stmts, *inlined, *after]))


def _names_of(expr) -> Optional[list]:
    """[names] of a name or a tuple/list of names, else None."""
    if isinstance(expr, cst.Name):
        return [expr.value]
    if isinstance(expr, (cst.Tuple, cst.List)) and all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in expr.elements):
        return [e.value.value for e in expr.elements]
    return None


def _effective(cls: cst.ClassDef, classes: dict, names) -> _Effective:
    methods: dict = {}
    for stmt in cls.body.body if isinstance(cls.body, cst.IndentedBlock) else []:
        if isinstance(stmt, cst.FunctionDef):
            if stmt.name.value in methods:
                raise _NotSimple(f"{stmt.name.value}() is defined twice")
            methods[stmt.name.value] = stmt
        elif not (_is_docstring(stmt) or m.matches(stmt, m.SimpleStatementLine([m.Pass()]))):
            raise _NotSimple(f"{cls.name.value} has class attributes (only methods are converted): convert by hand")
    for f in methods.values():
        if (f.decorators and not ((_is_static(f) or _is_class_method(f)) and f.name.value not in _METHODS)) \
                or f.asynchronous is not None:
            raise _NotSimple(f"{f.name.value}() is decorated or async")
    if len(cls.bases) != 1 or cls.keywords:
        raise _NotSimple("the class has several base classes")
    base_code = code(cls.bases[0].value)
    base = None if names.qualify(cls.bases[0].value) in PIPELINE_CLASS else _effective(classes[base_code], classes, names)
    init = methods.get("__init__")
    if base is None:
        if init is None:
            raise _NotSimple("the class needs both __init__ and define_graph to be converted")
        params, body = init.params, _body(init)
    elif init is None:
        params, body = base.params, base.init
    else:
        params, body = init.params, _inline_base_init(init, base_code, base)
    graph = methods.get("define_graph")
    if graph is not None and base is not None and base.define_graph is not None:
        graph = _inline_base_graph(graph, base.define_graph)
    elif graph is None and base is not None:
        graph = base.define_graph
    setup = methods.get("iter_setup")
    if setup is not None and any(type(c.func) is cst.Name and c.func.value == "super" for c in _calls(setup)):
        raise _NotSimple("iter_setup calls the base class's methods: convert by hand")
    if setup is None and base is not None:
        setup = base.iter_setup
    helpers = {**(base.helpers if base is not None else {}), **{n: f for n, f in methods.items() if n not in _METHODS}}
    return _Effective(params=params, init=body, define_graph=graph, iter_setup=setup, helpers=helpers)


# -- other methods ----------------------------------------------------------------------------
#
# A method that define_graph (or __init__, iter_setup, another such method) calls on self, as a
# statement of its own (`x = self.m(...)`, `return self.m(...)`, `self.m(...)`), is inlined there:
# the arguments bound to its parameters, its statements, then its returned value in place of the
# call. The operators it creates are then created by the same calls in the same order, which is
# what a pipeline's seeds follow (depth-first from the outputs) and what `verify` matches seeds by
# (the k-th operator of a kind created). A method nothing of that calls is dropped: every use of a
# converted pipeline object in the file is followed (call_sites.py), and a use of the object
# other than those (`len(pipe)`, `pipe.m()`, `print(pipe)`) keeps the pipeline a class, so nothing
# could call it any more. Methods DALI or Python call by themselves are not dropped: those that
# override Pipeline's own attributes and dunder methods other than the ones below.

# vars(nvidia.dali.pipeline.Pipeline) of DALI 2.4, dunders left out (tests/rules/test_legacy_classes.py
# compares it with the installed DALI).
_PIPELINE_ATTRS = frozenset((
    "_are_pipeline_inputs_possible", "_build_graph", "_check_api_type", "_check_api_type_scope",
    "_check_checkpointing_support", "_disable_pruned_external_source_instances", "_feed_input",
    "_generate_build_args", "_get_checkpoint", "_get_params", "_init_pipeline_backend", "_iter_setup",
    "_legacy_interleaved_prefetch", "_next_op_id", "_outputs", "_pipes", "_prefetch", "_raise_pipeline_required",
    "_release_outputs", "_require_exec_dynamic", "_require_no_foreign_ops", "_require_unique_names",
    "_restore_state_from_checkpoint", "_run", "_run_input_callbacks", "_run_once", "_schedule_py_workers",
    "_set_api_type", "_set_params", "_setup_input_callbacks", "_setup_pipe_pool_dependency", "_share_outputs",
    "_shutdown", "_start_py_workers", "_stub", "_transfer_operator", "add_sink", "batch_size", "build",
    "checkpoint", "concurrency", "cpu_queue_size", "current", "default_cuda_stream_priority", "define_graph",
    "deserialize", "deserialize_and_build", "device_id", "empty", "enable_api_check", "enable_memory_stats",
    "epoch_size", "exec_async", "exec_dynamic", "exec_pipelined", "exec_separated", "executor_statistics",
    "external_source_shm_statistics", "feed_input", "gpu_queue_size", "input_feed_count",
    "is_restored_from_checkpoint", "iter_setup", "max_batch_size", "max_streams", "num_outputs", "num_threads",
    "output_dtype", "output_ndim", "output_stream", "outputs", "pop_current", "prefetch_queue_depth",
    "push_current", "py_num_workers", "py_start_method", "reader_meta", "release_outputs", "reset", "run",
    "save_graph_to_dot_file", "schedule_run", "seed", "serialize", "set_affinity", "set_outputs",
    "share_outputs", "start_py_workers", "stream_policy",
))
# Dunder methods Python calls only where code uses the instance itself (len(pipe), str(pipe)).
_DROPPABLE_DUNDERS = ("__len__", "__repr__", "__str__")
_NOT_INLINED = frozenset((
    cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Global, cst.Nonlocal, cst.Yield, cst.Await,
    cst.Import, cst.ImportFrom, cst.Del,
))


def _not_inlined(stmt) -> bool:
    """Whether ``stmt`` holds what a helper written into its caller cannot: a construct of
    ``_NOT_INLINED`` or a ``super()`` call."""
    return any(
        type(n) in _NOT_INLINED or (type(n) is cst.Call and type(n.func) is cst.Name and n.func.value == "super")
        for n in cst_walk.walk(stmt)
    )


def _has(node, kind: type) -> bool:
    return any(type(n) is kind for n in cst_walk.walk(node))


def _check_helper_names(helpers: dict) -> None:
    for name in helpers:
        if name in _PIPELINE_ATTRS:
            raise _NotSimple(f"{name}() overrides Pipeline.{name}, which DALI itself uses: convert by hand")
        if name.startswith("__") and name.endswith("__") and name not in _DROPPABLE_DUNDERS:
            raise _NotSimple(f"the class defines {name}(), which Python calls by itself: convert by hand")


def _sole_decorator(func: cst.FunctionDef, name: str) -> bool:
    return len(func.decorators) == 1 and m.matches(func.decorators[0].decorator, m.Name(name))


def _is_static(func: cst.FunctionDef) -> bool:
    """``@staticmethod`` and no other decorator: called on self, it takes no self."""
    return _sole_decorator(func, "staticmethod")


def _is_class_method(func: cst.FunctionDef) -> bool:
    """``@classmethod`` and no other decorator (a factory: ``from_config(cls, ...)``, which other
    files call on the class)."""
    return _sole_decorator(func, "classmethod")


def _callee(call: cst.Call, helpers: dict, method: bool) -> Optional[str]:
    """The helper ``call`` calls: ``self.m(...)`` for methods (``method``), ``f(...)`` for functions."""
    func = call.func
    if method:
        name = func.attr.value if _is_self_attr(func) else None
    else:
        name = func.value if isinstance(func, cst.Name) else None
    return name if name in helpers else None


def _spelled(name: str, method: bool) -> str:
    return f"self.{name}" if method else name


def _helper_calls_in(nodes, helpers: dict, method: bool = True) -> list:
    """Names of the helpers that ``nodes`` call (on self for methods), in order."""
    return [name for n in nodes for c in _calls(n) if (name := _callee(c, helpers, method)) is not None]


def _reached(bodies: list, helpers: dict, method: bool = True) -> set:
    """The helpers that the statements in ``bodies`` call, directly or through each other."""
    todo = _helper_calls_in([s for b in bodies for s in b], helpers, method)
    seen: set = set()
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(_helper_calls_in([helpers[name]], helpers, method))
    return seen


def _helper_statement(stmt, helpers: dict, method: bool = True) -> Optional[tuple]:
    """(kind, call, small statement) when ``stmt`` is ``x = self.m(...)`` (kind "assign"),
    ``return self.m(...)`` ("return") or ``self.m(...)`` ("expr") for a helper m (``m(...)`` for
    functions)."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
        return None
    small = stmt.body[0]
    value = getattr(small, "value", None)
    if not (isinstance(value, cst.Call) and _callee(value, helpers, method) is not None):
        return None
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        return "assign", value, small
    if isinstance(small, cst.Return):
        return "return", value, small
    if isinstance(small, cst.Expr):
        return "expr", value, small
    return None


def _bind_helper(func: cst.FunctionDef, call: cst.Call, method: bool = True) -> list:
    """[(parameter, value)] as the call binds them: the call's arguments in their order (Python
    evaluates them in that order), then the defaults of the parameters it leaves out."""
    p = func.params
    what = f"{_spelled(func.name.value, method)}(...)"
    if p.star_arg not in (cst.MaybeSentinel.DEFAULT, None) or p.star_kwarg is not None:
        raise _NotSimple(f"{func.name.value}() takes *args/**kwargs: convert by hand")
    positional = [*p.posonly_params, *p.params]
    if method and not _is_static(func):
        if not positional or positional[0].name.value != "self":
            raise _NotSimple(f"{func.name.value}() does not take self first: convert by hand")
        positional = positional[1:]
    posonly = {q.name.value for q in p.posonly_params}
    every = {q.name.value: q for q in [*positional, *p.kwonly_params]}
    bound: dict = {}
    n = 0
    for arg in call.args:
        if arg.star:
            raise _NotSimple(f"{what} passes *args/**kwargs: convert by hand")
        if arg.keyword is None:
            if n >= len(positional):
                raise _NotSimple(f"{what} passes more arguments than {func.name.value}() takes")
            key = positional[n].name.value
            n += 1
        else:
            key = arg.keyword.value
            if key not in every or key in posonly:
                raise _NotSimple(f"{what} passes {key}=, which {func.name.value}() does not take")
        if key in bound:
            raise _NotSimple(f"{what} passes {key} twice")
        if _has(arg.value, cst.NamedExpr):
            raise _NotSimple(f"{what} binds a name in its arguments (:=): convert by hand")
        bound[key] = arg.value
    for key, q in every.items():
        if key not in bound:
            if q.default is None:
                raise _NotSimple(f"{what} does not pass {func.name.value}()'s parameter {key}")
            if not _simple_value(q.default):
                raise _NotSimple(f"{func.name.value}()'s default for {key} is `{code(q.default)}`: only names and literals are inlined")
            bound[key] = q.default
    return list(bound.items())


def _comprehension_targets(nodes) -> set:
    found: set = set()
    for n in nodes:
        for comp in cst_walk.walk(n):
            if type(comp) is cst.CompFor:
                found |= read_names(comp.target)
    return found


def _first_binding(stmts: list, name: str) -> Optional[int]:
    return next((i for i, s in enumerate(stmts) if name in _assigned(s)), None)


def _reads_before(stmts: list, returned, param: str, local: str) -> bool:
    """True when every read of ``param`` in the helper comes before ``local`` is bound, or in the
    plain assignment that binds it (its value is computed first): then ``local`` may take the
    name of the caller's variable passed for ``param``."""
    first = _first_binding(stmts, local)
    if first is None:
        return True
    everything = [*stmts, *([returned] if returned is not None else [])]
    last_read = max((i for i, s in enumerate(everything) if param in read_names(s)), default=None)
    if last_read is None or last_read < first:
        return True
    stmt = everything[first]
    return (
        last_read == first
        and isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Assign)
        and all(_names_of(t.target) is not None for t in stmt.body[0].targets)
    )


def _fold_literal_ifs(stmts: list) -> list:
    """``if True:`` / ``if False:`` (a literal argument in place of a parameter) -> the branch taken."""
    out: list = []
    for stmt in stmts:
        if isinstance(stmt, cst.If) and m.matches(stmt.test, m.Name("True") | m.Name("False")):
            if stmt.test.value == "True":
                taken = list(stmt.body.body)
            elif isinstance(stmt.orelse, cst.Else):
                taken = list(stmt.orelse.body.body)
            elif isinstance(stmt.orelse, cst.If):
                taken = [stmt.orelse.with_changes(leading_lines=[])]
            else:
                taken = []
            taken = _fold_literal_ifs(taken)
            if taken:
                taken[0] = taken[0].with_changes(leading_lines=[*stmt.leading_lines, *taken[0].leading_lines])
            out.extend(taken)
        else:
            out.append(stmt)
    return out


def _branches_only(stmt, helpers: dict, method: bool) -> bool:
    """``stmt`` is an ``if`` (with ``elif``/``else``) of indented blocks whose tests call no helper:
    the helper calls are all in its branches."""
    while isinstance(stmt, cst.If):
        if not isinstance(stmt.body, cst.IndentedBlock) or _helper_calls_in([stmt.test], helpers, method):
            return False
        stmt = stmt.orelse
    return stmt is None or (isinstance(stmt, cst.Else) and isinstance(stmt.body, cst.IndentedBlock))


def _inline_in_branches(stmt, helpers: dict, outer: set, later: set, used: set, stack: tuple, method: bool):
    """``stmt`` (an ``if`` that _branches_only accepts) with the helper calls of each branch inlined."""
    def block(b):
        return b.with_changes(body=_inline_helpers(list(b.body), helpers, outer, later, used, stack, method))

    orelse = stmt.orelse
    if isinstance(orelse, cst.If):
        orelse = _inline_in_branches(orelse, helpers, outer, later, used, stack, method)
    elif isinstance(orelse, cst.Else):
        orelse = orelse.with_changes(body=block(orelse.body))
    return stmt.with_changes(body=block(stmt.body), orelse=orelse)


#: {new name: the helper's own name} of the variables _inline_helpers renamed, where a caller asks
#: (helper_inlining: a marker quoting the inlined code then names what the user wrote)
RENAMED: contextvars.ContextVar = contextvars.ContextVar("dali_migrate_inline_renamed", default=None)


def _inline_helpers(body: list, helpers: dict, outer: set, later: set, used: set, stack: tuple = (), method: bool = True) -> list:
    """``body`` with each helper call statement replaced by the helper's statements.

    ``outer``: names the converted function binds besides ``body``'s own (a helper's variable must
    not take one of them, nor a global the helper reads be one); ``later``: names read after
    ``body`` runs; ``used``: names a new one must avoid (grows); ``method``: the helpers are
    methods called on self (else functions called by name)."""
    out: list = []
    for i, stmt in enumerate(body):
        hit = _helper_statement(stmt, helpers, method)
        if hit is None:
            called = _helper_calls_in([stmt], helpers, method)
            if called and _branches_only(stmt, helpers, method):
                # `if aug: images = helper(images)`: each branch is inlined as a body of its own;
                # it sees every name the enclosing body binds, and what runs after the `if` reads
                out.append(_inline_in_branches(
                    stmt, helpers, outer | _assigned(*out, *body), later | read_names(*body[i + 1 :]), used, stack, method
                ))
                continue
            if called:
                # `return helper(x), labels`: the call taken out into a statement of its own first
                hoisted = helper_hoisting.hoist(
                    stmt, lambda c: _callee(c, helpers, method) is not None, used,
                    lambda c: f"{_callee(c, helpers, method)}_result",
                )
                if hoisted is None:
                    spelled = _spelled(called[0], method)
                    raise _NotSimple(
                        f"{spelled}() is called inside a block, or inside an expression where taking it out would "
                        f"change what runs first; convert by hand"
                    )
                stmts, temps = hoisted
                inner = _inline_helpers(
                    stmts, helpers, outer | _assigned(*out, *body), later | read_names(*body[i + 1 :]), used, stack, method
                )
                out.extend(helper_hoisting.fold(inner, temps))
                continue
            out.append(stmt)
            continue
        kind, call, small = hit
        name = _callee(call, helpers, method)
        if name in stack:
            raise _NotSimple(f"{name}() calls itself (directly or through other {'methods' if method else 'functions'}): convert by hand")
        func = helpers[name]
        params = [q.name.value for q in [*func.params.posonly_params, *func.params.params, *func.params.kwonly_params]]
        hbody = _inline_helpers(_body(func), helpers, set(params), set(), used, (*stack, name), method)
        if any(_not_inlined(s) for s in hbody):
            raise _NotSimple(
                f"{name}() defines functions, lambdas or classes, uses global/nonlocal/del/import, yields or calls super(): convert by hand"
            )
        returned = None
        if hbody and m.matches(hbody[-1], m.SimpleStatementLine([m.Return()])):
            returned = hbody[-1].body[0].value
            hbody = hbody[:-1]
        if any(_has(s, cst.Return) for s in hbody):
            raise _NotSimple(f"{name}() returns from more than one place: convert by hand")
        if returned is None and kind != "expr":
            raise _NotSimple(f"{name}() returns nothing, and its result is used")
        binding = _bind_helper(func, call, method)
        own = _assigned(*hbody)
        substituted = {p: v for p, v in binding if p not in own and _simple_value(v)}
        prologue = [(p, v) for p, v in binding if p not in substituted]
        variables = own | {p for p, _ in prologue}
        if _comprehension_targets(hbody) & (variables | set(substituted)):
            raise _NotSimple(f"{name}() uses one of its variables in a comprehension: convert by hand")
        returned_nodes = [returned] if returned is not None else []
        free = read_names(*hbody, *returned_nodes) - variables - set(substituted) - {"self"}
        # a default the call leaves to the helper was evaluated in the helper's own scope (its
        # module's `size`), not the caller's, which may bind the name (a parameter `size`)
        declared = {q.name.value: q for q in [*func.params.posonly_params, *func.params.params, *func.params.kwonly_params]}
        free |= read_names(*(v for q, v in binding if declared[q].default is v)) - {"self"}
        caller_binds = outer | _assigned(*out, *body)
        if free & caller_binds:
            raise _NotSimple(
                f"{name}() reads {sorted(free & caller_binds)[0]} from the module, a name the code that calls it binds: convert by hand"
            )
        # Variables of the helper that would change what the caller sees get names of their own.
        after = read_names(*body[i + 1 :]) | later | (read_names(small.targets[0].target) if kind == "assign" else set())
        passed = read_names(*(v for _, v in prologue))
        table: dict = {}
        for var in sorted(variables):
            clash = var in outer or var in after or var in passed
            if not clash and var in read_names(*substituted.values()):
                # it takes the name of a variable passed in: harmless once the parameter is no longer read
                clash = var in {p for p, _ in prologue} or any(
                    var in read_names(v) and not _reads_before(hbody, returned, p, var) for p, v in substituted.items()
                )
            if clash:
                table[var] = cst.Name(fresh_name(var, used))
                renamed = RENAMED.get()
                if renamed is not None:
                    renamed[table[var].value] = var
        new = [
            assignment(table.get(p, cst.Name(p)), v) for p, v in prologue
        ]
        rename = {**substituted, **table}
        rest = _fold_literal_ifs(_rename(hbody, rename))
        value = _rename(returned_nodes, rename)[0] if returned is not None else None
        if _helper_calls_in(new, helpers, method):
            # `multiplexing(cond, resize(images), images)`: the arguments run before the helper's body,
            # so the helpers they call are written in first, as the caller's own statements
            new = _inline_helpers(
                new, helpers, caller_binds | _assigned(*rest),
                after | read_names(*rest, *([value] if value is not None else [])), used, stack, method,
            )
        new += rest
        if kind == "assign":
            if _names_of(small.targets[0].target) is None or _names_of(small.targets[0].target) != _names_of(value):
                new.append(stmt.with_changes(body=[small.with_changes(value=value)], leading_lines=[]))
        elif kind == "return":
            new.append(stmt.with_changes(body=[small.with_changes(value=value)], leading_lines=[]))
        elif value is not None and _has(value, cst.Call):
            new.append(stmt.with_changes(body=[small.with_changes(value=value)], leading_lines=[]))
        if new:
            # the call's comments go with the first statement that replaces it
            new[0] = new[0].with_changes(leading_lines=[*stmt.leading_lines, *new[0].leading_lines])
        # Fresh nodes: the engine's parent maps are by identity, and a helper is inlined in several
        # places (each subclass, each call, each use of a parameter).
        out.extend(s.deep_clone() for s in new)
    return out


class _WithoutComments(cst.CSTTransformer):
    """Drops the comments inside an ``ops.X(...)`` call: they move above the statement that
    calls the operator, and a comment left inside the arguments would either vanish with the
    argument's comma or show up twice."""

    def leave_TrailingWhitespace(self, original, updated):
        if updated.comment is None:
            return updated
        return updated.with_changes(whitespace=cst.SimpleWhitespace(""), comment=None)

    def leave_EmptyLine(self, original, updated):
        return cst.RemoveFromParent() if updated.comment is not None else updated


def _comment_lines(stmt, skip: int = 0, more: tuple = ()) -> list:
    """Every comment of ``stmt`` (the lines above it, those among its arguments, the one after
    it), in source order, as comment lines to go above another statement; the first ``skip`` left
    out and ``more`` added (:func:`_continued`)."""
    return [cst.EmptyLine(comment=c) for c in [*cst_walk.comments(stmt)[skip:], *more]]


def _continued(stmts: list, makes_op) -> dict:
    """{id(statement): (how many of its first comments continue the one before, the comments that
    continue its own trailing comment)} for statements ``makes_op`` says make operators, one after
    the other: a comment after the line, carried on below it, aligned under it
    (``self.hsv = ops.Hsv(...)  # use float to avoid clipping and`` then ``# quantizing the
    intermediate result``), is the next statement's leading line to libcst; it goes with its line."""
    out: dict = {}
    for a, b in zip(stmts, stmts[1:]):
        if not (makes_op(a) and makes_op(b) and isinstance(a, cst.SimpleStatementLine)
                and a.trailing_whitespace.comment is not None):
            continue
        lines = []
        for line in b.leading_lines:
            if line.comment is None or not line.whitespace.value:
                break
            lines.append(line.comment)
        if lines:
            skip, more = out.get(id(a), (0, ()))
            out[id(a)] = (skip, (*more, *lines))
            skip, more = out.get(id(b), (0, ()))
            out[id(b)] = (len(lines), more)
    return out


def _fn_call_for_op(op_call: cst.Call, invocation: cst.Call, names, catalog) -> cst.Call:
    ops_path = names.ops_op(op_call.func)
    info = catalog.ops(ops_path) if ops_path else None
    if info is None:
        # (the catalog is DALI's own registry: an operator it lacks is not one of that DALI, as old
        # names removed in DALI 1.0 such as ops.HostDecoder, or a plugin library's)
        raise _NotSimple(f"unknown legacy operator ops.{ops_path}: DALI {catalog.dali_version}'s operator registry has no such "
                         "operator; either it was removed or renamed (then the pipeline does not run on that DALI either: "
                         "write its current name and convert again) or it comes from a plugin library (convert by hand)")
    args = [*invocation.args, *op_call.args]
    seen = set()
    for a in args:
        if a.keyword is not None:
            if a.keyword.value in seen:
                # DALI drops a None given at either place and refuses two values; which one the
                # pipeline used depends on values known when it runs, and a converted call can
                # take the argument once
                key = a.keyword.value
                raise _NotSimple(
                    f"ops.{ops_path} gets {key}= both where it is made and where define_graph calls it: DALI "
                    f"ignores a None at either place and refuses two values, a converted call takes {key}= "
                    f"once: pass it at one place only (the other's value when that one is None), then convert")
            seen.add(a.keyword.value)
    positional = [a for a in args if a.keyword is None]
    keywords = [a for a in args if a.keyword is not None]
    args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in [*positional, *keywords]]
    return cst.Call(func=attr_chain(f"{SYNTHETIC_FN}.{info.fn_name}"), args=args)


@dataclasses.dataclass
class _Feed:
    data: cst.BaseExpression  # the batch, as the iteration's draws leave it
    layout: Optional[cst.BaseExpression]
    used: bool = False


def _feed_call(stmt) -> Optional[cst.Call]:
    if m.matches(stmt, m.SimpleStatementLine([m.Expr(m.Call(func=m.Attribute(value=m.Name("self"), attr=m.Name("feed_input"))))])):
        return stmt.body[0].value
    return None


def _feed_key(node) -> tuple:
    if _is_self_attr(node):
        return ("attr", node.attr.value)
    if isinstance(node, cst.SimpleString):
        return ("name", node.evaluated_value)
    raise _NotSimple(f"feed_input({code(node)}, ...): only nodes kept as self.<name>, or external sources' names, are followed")


def _iter_setup(func: cst.FunctionDef, locals_of: dict, values: set, bound: set, spelled: set, taken: set, graph_attrs: set,
                shared: frozenset = frozenset()) -> tuple:
    """(iter_setup's statements as the converted loop runs them, {node key: _Feed}, self's attributes it assigns).

    ``locals_of``: self's attributes it may read -> their locals; ``bound`` / ``spelled``: the names
    the synthesized function binds / spells; ``taken``: names a new one must avoid (grows);
    ``shared``: module-level variables that other code of the file uses too."""
    p = func.params
    if len(p.params) != 1 or p.posonly_params or p.kwonly_params or p.star_kwarg is not None or p.star_arg not in (
        cst.MaybeSentinel.DEFAULT, None
    ):
        raise _NotSimple("iter_setup takes arguments")
    body = _body(func)
    if any(_has_any(s, (cst.Return, cst.Yield, cst.Global, cst.Nonlocal, cst.Await)) for s in body):
        raise _NotSimple("iter_setup returns early, yields or declares globals: convert by hand")

    # The feed_input calls: in a row at the end of iter_setup, or at the end of a `try:` that ends it
    # whose handlers all re-raise (so an iteration feeds every node, or ends).
    feeds: list = []

    def pop_feeds(stmts) -> list:
        kept = list(stmts)
        while kept and _feed_call(kept[-1]) is not None:
            feeds.insert(0, kept.pop())
        return kept

    body = pop_feeds(body)
    in_try = None
    if not feeds and body and isinstance(body[-1], cst.Try) and not body[-1].orelse and not body[-1].finalbody:
        inner = pop_feeds(body[-1].body.body)
        if feeds:
            for h in body[-1].handlers:
                if not (h.body.body and m.matches(h.body.body[-1], m.SimpleStatementLine([m.Raise()]))):
                    raise _NotSimple("iter_setup feeds inside a `try:` whose handler does not re-raise: convert by hand")
            in_try = inner
    others = body if in_try is None else [*body[:-1], *in_try, *body[-1].handlers]
    if any("feed_input" in _self_attrs(s) for s in others):
        raise _NotSimple(
            "iter_setup calls feed_input under a condition or in a loop, or does more after it: only an iter_setup "
            "that ends by feeding every input once is converted; convert by hand"
        )

    # self's attributes: the __init__ values it reads and assigns, the batch size; no graph node.
    for attr in sorted(_self_targets(*body)):
        if attr not in values:
            raise _NotSimple(f"iter_setup assigns self.{attr}, which __init__ does not set")
    writes = _self_targets(*body)
    feed_args = [a.value for f in feeds for a in _feed_call(f).args]
    own = _assigned(*body)
    free = read_names(*body, *feed_args) - own - {"self"}
    if free & bound:
        raise _NotSimple(f"iter_setup reads {', '.join(sorted(free & bound))} from the module, a name the converted function binds")
    if free & shared:
        raise _NotSimple(
            f"iter_setup draws from the module-level {sorted(free & shared)[0]}, which other code of the file uses too: "
            "a pipeline draws prefetch_queue_depth batches ahead, the converted loop one per next(), so that code "
            "would see another order; give the pipeline an iterator of its own, or convert by hand"
        )
    # iter_setup's variables get other names where the synthesized function spells the same.
    table = {name: cst.Name(fresh_name(name, taken)) for name in sorted(own & spelled)}

    def local(node):
        return _self_reads(_rename([node], table)[0], locals_of, "iter_setup")

    result: dict = {}
    temps: list = []
    earlier: set = set()
    for stmt in feeds:
        args = list(_feed_call(stmt).args)
        if any(a.star for a in args) or len(args) < 2 or args[0].keyword is not None or args[1].keyword is not None:
            raise _NotSimple("feed_input(...) without a node and its data as its first arguments: convert by hand")
        node, data, layout = args[0].value, args[1].value, None
        for i, a in enumerate(args[2:]):
            if (a.keyword is None and i == 0) or (a.keyword is not None and a.keyword.value == "layout"):
                layout = a.value
            elif a.keyword is None or a.keyword.value != "use_copy_kernel":
                raise _NotSimple(f"feed_input({code(a)}) is not converted: convert by hand")
        key = _feed_key(node)
        if key in result:
            raise _NotSimple(f"iter_setup feeds {code(node)} twice")
        if key[0] == "attr" and key[1] not in graph_attrs:
            raise _NotSimple(f"iter_setup feeds self.{key[1]}, which define_graph does not set")
        data = local(data)
        if layout is not None:
            layout = local(layout)
            if m.matches(layout, m.Name("None")) or (isinstance(layout, cst.SimpleString) and not layout.evaluated_value):
                layout = None
        read = read_names(data)
        if _has_any(data, (cst.Call,)) and read & earlier:
            raise _NotSimple("a feed_input call changes what an earlier one fed: convert by hand")
        earlier |= read
        if not isinstance(data, cst.Name):
            # computed where feed_input was called, so later statements see the same state
            tmp = fresh_name(f"{key[1] if key[1].isidentifier() else 'fed'}_data", taken)
            temps.append(stmt.with_changes(body=[cst.Assign([cst.AssignTarget(cst.Name(tmp))], data)]))
            data = cst.Name(tmp)
        result[key] = _Feed(data=data, layout=layout)

    if in_try is not None:
        last = body[-1]
        body = [*body[:-1], last.with_changes(body=last.body.with_changes(body=[*in_try, *temps] or [cst.SimpleStatementLine([cst.Pass()])]))]
        temps = []
    out = [local(s) for s in body] + temps
    if any("self" in names_in(s) for s in out):
        raise _NotSimple("iter_setup uses self in a way that cannot be followed")
    return out, result, writes


def _setting_locals(settings: list, param_names: set) -> dict:
    """{Pipeline attribute: the local that holds that setting in the converted function}, for the
    settings the constructor gives."""
    given = {a.keyword.value: a.value for a in settings}
    out = {}
    for attr, key in _SETTING_ATTRS.items():
        value = given.get(key)
        if value is not None:
            out[attr] = value.value if isinstance(value, cst.Name) and value.value in param_names else key
    return out


def _class_to_pipeline(cls: cst.ClassDef, names, catalog, classes: dict, taken: set, shared: frozenset = frozenset()) -> cst.FunctionDef:
    eff = _effective(cls, classes, names)
    if eff.define_graph is None:
        raise _Abstract("the class needs both __init__ and define_graph to be converted")
    params = eff.params
    if not params.params or params.params[0].name.value != "self":
        raise _NotSimple("__init__ without self")
    self_name = "self"
    settings, ops_members, values, setup = None, {}, {}, []
    op_comments: dict = {}  # ops member -> the comment lines of the statements that made it
    settings_locals: dict = {}
    param_names = {p.name.value for p in [*params.params[1:], *params.kwonly_params, *params.posonly_params]}
    helpers = eff.helpers
    _check_helper_names(helpers)
    graph_stmts = _body(eff.define_graph)
    setup_stmts = _body(eff.iter_setup) if eff.iter_setup is not None else []
    unused = set(helpers) - _reached([eff.init, graph_stmts, setup_stmts], helpers)
    helpers = {k: v for k, v in helpers.items() if k not in unused}  # nothing can call the rest (see above)
    called = sorted(k for k, f in helpers.items() if _is_class_method(f))
    if called:
        # (written into its caller it would take `cls` for `self`)
        raise _NotSimple(f"{called[0]}(), a class method, is called by the class's own code: convert by hand")
    used_names = set(taken) | names_in(cls) | {n for f in helpers.values() for n in names_in(f)}
    init_body = _inline_helpers(
        eff.init, helpers, param_names | set(_SETTINGS),
        read_names(*graph_stmts, *setup_stmts, *helpers.values()), used_names,
    ) if helpers else eff.init
    # An `if` of __init__ that chooses operators (`if dali_cpu: self.decode = ops.X(device="cpu")
    # else: ...`) ran when the pipeline was built: its condition, evaluated again where define_graph
    # calls the operator, gives the same answer as long as what it reads stays as it was.
    choices: list = []  # _InitIf, in order
    chosen: dict = {}  # member -> (index in choices, {branch: synthetic member})
    read_by_choices: set = set()  # names (and self's values) the conditions read
    read_by_ops: set = set()  # self's values that operators' arguments read
    op_reads: list = []  # (index in init_body, variables, self's values) of each statement making operators
    # self.<value> is the local of the same name, or of a new one where that name is a variable
    # of the class's code too (self.dataset = iter(dataset); crop = 224; self.crop = crop + 32)
    attr_local: dict = {}
    variables = param_names | read_names(*init_body, *graph_stmts, *setup_stmts, *helpers.values())

    def value_table() -> dict:
        return {k: attr_local.get(k, k) for k in values}

    def self_table() -> dict:
        return {**settings_locals, **value_table()}

    def value_locals() -> set:
        return set(values) | set(attr_local.values())

    def _choose_operators(stmt: cst.If, gi: int) -> list:
        choice = _init_if(stmt, names, self_table())
        first = first_line(stmt)
        has_else = choice.tests[-1] is None
        members = set().union(*choice.calls)
        kept = set().union(*choice.values)
        for attr in sorted(kept):
            if not has_else or not all(attr in v for v in choice.values):
                raise _NotSimple(f"`{first}` sets self.{attr} in some of its branches only")
            if attr in _SETTING_ATTRS or attr in param_names or attr in ops_members or attr in chosen or attr in values:
                raise _NotSimple(f"`{first}` sets self.{attr}, which is set elsewhere too or names a parameter")
        for attr in sorted(members):
            if attr in ops_members or attr in chosen or attr in values or attr in kept:
                raise _NotSimple(f"self.{attr} is set both under `{first}` and outside it")
        # what the condition reads is __init__'s own (parameters, its locals, self's values), or
        # it is asked once (a module's variable may be set again by the time the loop would read it)
        own = param_names | set(settings_locals.values()) | value_locals() | _assigned(*init_body)
        for test in choice.tests:
            if test is not None:
                if read_names(test) - own - set(names.aliases) - {"True", "False", "None"}:
                    # a module's variable may be set again by the time the loop would read it
                    choice.once = True
                read_by_choices.update(read_names(test))
        if read_by_choices & set().union(*(_assigned(*body) for _, body in _if_chain(stmt))):
            raise _NotSimple(f"`{first}` sets a name its condition reads")
        choices.append(choice)
        for attr in sorted(members):
            made = [c.get(attr) for c in choice.calls]
            if has_else and all(made) and len({code(call) for call, _ in made}) == 1:
                # the same operator whichever branch runs: no `if` where define_graph calls it
                ops_members[attr] = made[0][0].visit(_WithoutComments())
                for _, line in made:
                    read_by_ops.update(_self_attrs(line.body[0].value))
                    op_comments.setdefault(attr, []).extend(_comment_lines(line))
                continue
            branch = {}
            for k, made in enumerate(choice.calls):
                if attr in made:
                    call, line = made[attr]
                    syn = fresh_name(f"{attr}__branch{k}", used_names)
                    branch[k] = syn
                    ops_members[syn] = call.visit(_WithoutComments())
                    read_by_ops.update(_self_attrs(line.body[0].value))
                    op_comments.setdefault(syn, []).extend(_comment_lines(line))
            chosen[attr] = (gi, branch)
        for attr in kept:
            values[attr] = cst.Name(attr)
            if any(attr in lit for lit in choice.literals):
                read_by_choices.add(attr)  # define_graph's `if self.<attr> == ...` may be decided by it
        # what the branches compute besides operators (dali_device = "cpu") stays in them
        bodies = iter(choice.bodies)

        def branch(block: cst.IndentedBlock) -> cst.IndentedBlock:
            return block.with_changes(body=next(bodies) or [cst.SimpleStatementLine([cst.Pass()])])

        def rebuild(node: cst.If, tests: list) -> cst.If:
            body = branch(node.body)
            orelse = node.orelse
            if isinstance(orelse, cst.If):
                orelse = rebuild(orelse, tests[1:])
            elif isinstance(orelse, cst.Else):
                orelse = orelse.with_changes(body=branch(orelse.body))
            return node.with_changes(test=tests[0], body=body, orelse=orelse)

        new = rebuild(stmt, [t for t in choice.tests if t is not None])
        if choice.once:
            return _flagged(new, choice, fresh_name("branch", used_names))
        if all(m.matches(b, m.SimpleStatementLine([m.Pass()])) for b in _if_bodies(new)):
            # conditions read values only: nothing is lost by not evaluating them here; the
            # comments above the `if` go with its first operator, to where the loop calls it
            said = [ln for ln in stmt.leading_lines if ln.comment is not None]
            k, made = next(((k, made) for k, made in enumerate(choice.calls) if made), (None, None))
            if said and made:
                attr = next(iter(made))
                key = attr if attr in ops_members else chosen[attr][1][k]
                op_comments[key] = [*said, *op_comments.get(key, [])]
            return []
        return [new]

    def makes_op(stmt) -> bool:
        assigned = _member_assign(stmt)
        return assigned is not None and isinstance(assigned[1], cst.Call) and names.ops_op(assigned[1].func) is not None

    init_body = _defaults_folded([_chosen_by_ifexp(stmt, names) for stmt in init_body], names)
    continued = _continued(init_body, makes_op)
    for at, stmt in enumerate(init_body):
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
            small = stmt.body[0]
            if m.matches(small, m.Expr(m.Call(func=m.Attribute(attr=m.Name("__init__"))))):
                args = _super_init_args(stmt, "Pipeline")
                if args is None or settings is not None:
                    raise _NotSimple("__init__ calls the base class's __init__ in a way that cannot be followed")
                settings = _kwargs_from_pipeline_call(cst.Call(func=cst.Name("Pipeline"), args=args))
                if settings is None:
                    raise _NotSimple("super().__init__ with *args/**kwargs")
                # the settings become the converted function's defaults, evaluated where it is
                # defined: what __init__ computed before (self.bs, a local) is not there yet
                before = {self_name} | _assigned(*setup)
                early = [a for a in settings if a.keyword.value in _SETTINGS and read_names(a.value) & before]
                if early:
                    raise _NotSimple(f"super().__init__(...) gives the pipeline a setting that __init__ computes "
                                     f"first (`{early[0].keyword.value}={code(early[0].value)}`): convert by hand")
                settings_locals = _setting_locals(settings, param_names)
                continue
            assigned = _member_assign(stmt)
            if assigned is not None:
                attr, written = assigned
                if attr in chosen:
                    raise _NotSimple(f"self.{attr} is set both under an `if` of __init__ and outside it")
                if attr in read_by_choices:
                    raise _NotSimple(f"self.{attr} is set again after an `if` of __init__ that reads it")
                if isinstance(written, cst.Call) and names.ops_op(written.func):
                    # e.g. ops.BoxEncoder(anchors=self.anchors): the values it reads are locals by now
                    # (a visit rebuilds every node it passes: _WithoutComments runs only where a comment
                    # is, and most calls have none)
                    value = written.visit(_WithoutComments()) if cst_walk.comments(written) else written
                    ops_members[attr] = _self_reads(value, self_table(), f"self.{attr} = ...")
                    read_by_ops |= _self_attrs(written)
                    op_reads.append((at, read_names(written), _self_attrs(written)))
                    op_comments.setdefault(attr, []).extend(_comment_lines(stmt, *continued.get(id(stmt), (0, ()))))
                    continue
                if attr in _SETTING_ATTRS:
                    raise _NotSimple(f"__init__ sets self.{attr}, a Pipeline attribute")
                if attr in read_by_ops:
                    # the operator's call is written where define_graph calls it: it would see the new value
                    raise _NotSimple(f"self.{attr} is set again after an operator's arguments read it")
                # e.g. self.iterator = iter(self.external_data): the members it reads are locals by now
                value = _self_reads(written, self_table(), f"self.{attr} = ...")
                local = attr_local.get(attr, attr)
                if attr not in attr_local and attr in variables and not (
                    m.matches(value, m.Name(attr)) and attr not in _assigned(*init_body[at + 1 :], *graph_stmts, *setup_stmts)
                ):
                    # the variable keeps its own value: __init__'s later code, define_graph or
                    # the operators may read it (self.x = x stays x while nothing binds x again)
                    local = attr_local[attr] = fresh_name(attr, used_names)
                values[attr] = value
                if not m.matches(value, m.Name(local)):
                    setup.append(stmt.with_changes(body=[cst.Assign([cst.AssignTarget(cst.Name(local))], value)]))
                continue
        if isinstance(stmt, cst.If) and self_name in names_in(stmt) and settings is not None:
            setup.extend(_choose_operators(stmt, len(choices)))
            op_reads.append((at, read_names(stmt), _self_attrs(stmt)))
            continue
        if settings is not None and m.matches(stmt, m.SimpleStatementLine(body=[m.Expr(m.Call(
                func=m.Attribute(value=m.Name(self_name), attr=m.Name("build")), args=[]))])):
            continue  # self.build() (Lightning's DALI example): a converted pipeline needs no build
        if self_name in names_in(stmt):
            # a marker is one line: the statement's first, without the comments above it
            first = first_line(stmt)
            try:
                # print('DALI "{0}" variant'.format(self.dali_device)): the value is a local by now
                if settings is None or _self_targets(stmt):
                    raise _NotSimple(first)
                stmt = _self_reads(stmt, self_table(), "__init__")
            except _NotSimple:
                raise _NotSimple(f"__init__ does more than create operators and store values: {first[:60]}") from None
        if _assigned(stmt) & read_by_choices:
            raise _NotSimple(f"__init__ sets {sorted(_assigned(stmt) & read_by_choices)[0]} again after an `if` that reads it")
        setup.append(stmt)
    if settings is None:
        raise _NotSimple("__init__ does not call super().__init__(...)")
    # DALI takes an operator's arguments when __init__ makes it; converted, they are read where
    # define_graph calls it, so what __init__ (or the graph, iter_setup) does to them later would
    # reach the operator (size = 64; ops.Resize(resize_x=size); size = 32)
    # (what each statement binds or changes is found once; each operator asks about those after it)
    per_statement = [(_assigned(s), _changed_anywhere(s), _self_changed_anywhere(s)) for s in init_body] if op_reads else []
    in_graph = (_changed_anywhere(*graph_stmts, *setup_stmts), _self_changed_anywhere(*graph_stmts, *setup_stmts)) if op_reads else None
    for at, variables_read, values_read in op_reads:
        variables_read = variables_read - {self_name}
        later = per_statement[at + 1 :]
        rebound = variables_read & set().union(*(bound for bound, _, _ in later))
        changed = (variables_read & set().union(in_graph[0], *(c for _, c, _ in later))) | (
            values_read & set().union(in_graph[1], *(c for _, _, c in later)))
        if rebound or changed:
            what = f"`{sorted(rebound)[0]}` is bound again" if rebound else f"`{sorted(changed)[0]}` is changed in place"
            raise _NotSimple(
                f"{what} after __init__ made an operator from it ({first_line(init_body[at])[:60]}): DALI took "
                "the value it had then, the converted code would pass the later one; give each value a name of "
                "its own, then convert")
    graph = eff.define_graph
    gparams = graph.params
    if len(gparams.params) != 1 or gparams.kwonly_params or gparams.star_arg not in (cst.MaybeSentinel.DEFAULT, None):
        raise _NotSimple("define_graph takes arguments")
    graph_body = graph_stmts
    iter_setup = eff.iter_setup
    if helpers:
        outer = param_names | value_locals() | set(_SETTINGS) | _assigned(*setup) | set(settings_locals.values())
        graph_body = _inline_helpers(graph_body, helpers, outer, set(), used_names)
        if iter_setup is not None:
            inlined = _inline_helpers(setup_stmts, helpers, outer | _assigned(*graph_body), read_names(*graph_body), used_names)
            iter_setup = iter_setup.with_changes(body=iter_setup.body.with_changes(body=inlined))

    inlined_graph = graph_body  # (before the chosen operators' `if`s, which read __init__'s conditions)
    if chosen:
        graph_body = _expand_choices(graph_body, setup_stmts, choices, chosen, value_table())

    # define_graph and iter_setup ran in scopes of their own: a name they read from outside the
    # class (a module's variable) that __init__ binds, as a parameter or a local, would read
    # __init__'s value once they are one function
    init_bound = param_names | value_locals() | _assigned(*setup) | set(settings_locals.values())
    read_by_made_ops = read_names(*ops_members.values())
    graph_renames: dict = {}  # define_graph's locals that take new names (see below)
    # (as written into the one function: helpers inlined, whose locals count as the caller's)
    inlined_setup = _body(iter_setup) if iter_setup is not None else []
    for what, stmts in (("define_graph", inlined_graph), ("iter_setup", inlined_setup)):
        captured = (read_names(*stmts) - _assigned(*stmts) - {self_name}) & init_bound
        if captured:
            first = sorted(captured)[0]
            raise _NotSimple(
                f"{what} reads `{first}` from outside the class, and __init__ binds `{first}` too: in the one "
                f"converted function {what}'s code would read __init__'s value; rename one of them, or convert by hand"
            )
        # operators made in __init__ are called in the loop now, their arguments read there: a
        # name the graph binds (resize = self.rand_resize() beside ops.Uniform(range=[resize, ...]))
        # would be the graph's value from the second iteration on
        rebound = read_by_made_ops & _assigned(*stmts)
        hidden = (read_names(*setup) - init_bound - {self_name}) & _assigned(*stmts)
        # (renamable is asked of graph_body, what the renaming goes through: helpers written in included)
        if what == "define_graph" and (rebound or hidden) and _locals_renamable(graph_body, rebound | hidden):
            # a name define_graph binds is its own local, in every place it spells it: under a
            # new name there, the operators' arguments and __init__'s code read what they read
            # before, and define_graph computes what it computed
            for name in sorted(rebound | hidden):
                graph_renames[name] = cst.Name(fresh_name(name, used_names))
            continue
        if rebound:
            first = sorted(rebound)[0]
            raise _NotSimple(
                f"an operator made in __init__ reads `{first}`, which {what} binds: in the one converted function "
                f"the operator's arguments would read {what}'s value; rename one of them, or convert by hand"
            )
        # (and the other way: a name bound there is local to the whole function, where __init__'s
        # code would read it before it is bound)
        if hidden:
            first = sorted(hidden)[0]
            raise _NotSimple(
                f"__init__ reads `{first}` from outside the class, and {what} binds `{first}`: in the one converted "
                f"function __init__'s code would read {what}'s local before it is bound; rename one of them, or convert by hand"
            )

    graph_body = _rename(graph_body, graph_renames)

    # Nodes define_graph keeps as self.<attr> (for iter_setup to feed them) become locals.
    graph_attrs = _self_targets(*graph_body)
    if graph_attrs & set(values):
        raise _NotSimple(f"self.{sorted(graph_attrs & set(values))[0]} is set both in __init__ and in define_graph")
    bound = param_names | value_locals() | set(_SETTINGS) | _assigned(*setup, *graph_body)
    spelled = bound | read_names(*setup, *graph_body)
    used = set(taken) | spelled
    graph_locals = {attr: (attr if attr not in spelled else fresh_name(attr, used)) for attr in sorted(graph_attrs)}
    used |= set(graph_locals.values())

    draws, feeds = [], {}
    if iter_setup is not None:
        locals_of = self_table()
        draws, feeds, writes = _iter_setup(
            iter_setup, locals_of, set(values), bound | set(graph_locals.values()),
            spelled | set(graph_locals.values()), used, graph_attrs, shared,
        )
        read_by_graph = set().union(*map(_self_attrs, graph_body))
        if writes & read_by_ops:
            raise _NotSimple(
                f"an operator made in __init__ reads self.{sorted(writes & read_by_ops)[0]}, which iter_setup changes "
                "(DALI took the value it had when __init__ made the operator)"
            )
        if writes & read_by_graph:
            raise _NotSimple(
                f"define_graph reads self.{sorted(writes & read_by_graph)[0]}, which iter_setup changes "
                "(a pipeline reads it once, when it is built)"
            )

    def attach_feed(call: cst.Call, feed: _Feed) -> cst.Call:
        if kwarg(call, "source") is not None:
            raise _NotSimple("iter_setup feeds an external source that has source= (DALI rejects that)")
        if kwarg(call, SYNTHETIC_FEED) is not None:
            raise _NotSimple("iter_setup feeds one external source twice")
        feed.used = True
        args = list(call.args)
        if feed.layout is not None:
            own = kwarg(call, "layout")
            if own is None:
                args.append(cst.Arg(keyword=cst.Name("layout"), value=feed.layout, equal=_EQ))
            elif not (
                isinstance(own.value, cst.SimpleString)
                and isinstance(feed.layout, cst.SimpleString)
                and own.value.evaluated_value == feed.layout.evaluated_value
            ):
                raise _NotSimple("the ExternalSource's layout= and feed_input's layout differ, or cannot be compared (DALI rejects different ones)")
        args.append(cst.Arg(keyword=cst.Name(SYNTHETIC_FEED), value=feed.data, equal=_EQ))
        return call.with_changes(args=args)

    def is_external_source(op_call) -> bool:
        path = names.ops_op(op_call.func)
        info = catalog.ops(path) if path else None
        return info is not None and info.fn_name == "external_source"

    # every change is at a `self` (self.op(...), self.x, self.x = ...): only the way to one is entered
    enter = cst_walk.holding(graph_body, lambda n: type(n) is cst.Name and n.value == self_name)

    class _Graph(cst.CSTTransformer):
        def on_visit(self, node) -> bool:
            return id(node) in enter

        def leave_Call(self, original, updated):
            if _is_self_attr(original.func, self_name) and original.func.attr.value in ops_members:
                op_call = ops_members[original.func.attr.value]
                new = _fn_call_for_op(op_call, updated, names, catalog)
                name = kwarg(new, "name")
                if is_external_source(op_call) and name is not None and isinstance(name.value, cst.SimpleString):
                    feed = feeds.get(("name", name.value.evaluated_value))
                    if feed is not None:
                        new = attach_feed(new, feed)
                return new
            return updated

        def leave_Assign(self, original, updated):
            target = original.targets[0].target if len(original.targets) == 1 else None
            feed = feeds.get(("attr", target.attr.value)) if _is_self_attr(target, self_name) else None
            if feed is None:
                return updated
            value = original.value
            if not (
                isinstance(value, cst.Call)
                and _is_self_attr(value.func, self_name)
                and value.func.attr.value in ops_members
                and is_external_source(ops_members[value.func.attr.value])
            ):
                raise _NotSimple(f"iter_setup feeds self.{target.attr.value}, which is not set to an ExternalSource's output")
            return updated.with_changes(value=attach_feed(updated.value, feed))

        def leave_Attribute(self, original, updated):
            if type(original.value) is cst.Name and original.value.value == self_name:
                attr = original.attr.value
                if attr in values:
                    return cst.Name(attr_local.get(attr, attr))
                if attr in graph_locals:
                    return cst.Name(graph_locals[attr])
                if attr in settings_locals:
                    return cst.Name(settings_locals[attr])
                if attr not in ops_members:
                    raise _NotSimple(f"define_graph uses self.{attr}, which __init__ does not set")
            return updated

    new_body = [s.visit(_Graph()) for s in graph_body]
    # An ops.X(...) statement of __init__ has no statement of its own in the function: its comments
    # go above the first one that calls the operator or, for one that nothing calls, above the
    # function's first statement (the converted code must not lose what its author wrote).
    stmts = [*setup, *new_body]
    for attr, lines in op_comments.items():
        if not lines:
            continue
        call = m.Call(func=m.Attribute(value=m.Name(self_name), attr=m.Name(attr)))
        at = next((i for i, stmt in enumerate(graph_body) if any(m.matches(c, call) for c in _calls(stmt))), None)
        i = len(setup) + at if at is not None else 0
        stmts[i] = stmts[i].with_changes(leading_lines=[*stmts[i].leading_lines, *lines])
    setup, new_body = stmts[: len(setup)], stmts[len(setup) :]
    unfed = [key for key, feed in feeds.items() if not feed.used]
    if unfed:
        raise _NotSimple(f"iter_setup feeds {unfed[0][1]!r}, which no ExternalSource of define_graph makes")
    if self_name in {n for s in new_body for n in names_in(s)}:
        raise _NotSimple("define_graph uses self in a way that cannot be followed")
    block = []
    if iter_setup is not None:
        block = [cst.If(test=cst.Name(SYNTHETIC_ITER_SETUP), body=cst.IndentedBlock(draws or [cst.SimpleStatementLine([cst.Pass()])]))]
    first = cls.body.body[0] if isinstance(cls.body, cst.IndentedBlock) and cls.body.body else None
    doc = [first] if _is_docstring(first) else []
    return cst.FunctionDef(
        name=cls.name,
        params=params.with_changes(params=params.params[1:]),
        body=cst.IndentedBlock([*doc, *setup, *block, *new_body]),
        decorators=[_decorator(settings)],
        leading_lines=cls.leading_lines,
    )


_OWN_SCOPES = (cst.Lambda, cst.FunctionDef, cst.ClassDef, cst.Global, cst.Nonlocal)


def _locals_renamable(stmts: list, names: set) -> bool:
    """Whether every place ``stmts`` spell these names is the one function's local: not a
    lambda's or inner function's parameter or name of its own, not declared global."""
    for stmt in stmts:
        for node in cst_walk.walk(stmt):
            if isinstance(node, _OWN_SCOPES) and not names.isdisjoint(cst_walk.names(node)):
                return False
    return True


def iter_setup_draws(stmt) -> Optional[list]:
    """The statements of a synthesized iter_setup block, or None when ``stmt`` is not one."""
    if isinstance(stmt, cst.If) and m.matches(stmt.test, m.Name(SYNTHETIC_ITER_SETUP)):
        return list(stmt.body.body)
    return None


def _used_outside(module: cst.Module, cls: cst.ClassDef) -> frozenset:
    """Module-level variables (assigned, not imported or defined) that the file's code other than
    ``cls`` reads."""
    hit = _outside_cache.get(id(module))
    if hit is None or hit[0] is not module:
        hit = (module, *_module_reads(module))
        _outside_cache.clear()  # one module at a time; the entry keeps it alive, so ids stay unique
        _outside_cache[id(module)] = hit
    _, variables, per_statement = hit
    found: set = set()
    for stmt, names in per_statement:
        if stmt is not cls:
            found |= names
    return frozenset(found & variables)


_outside_cache: dict = {}
_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_UNPACKED = (cst.Name, cst.Tuple, cst.List)


def _module_reads(module: cst.Module):
    """(module-level variables, [(top-level statement, names it uses)]): read with cst_walk, not a
    visitor, since every Pipeline subclass of the file asks (the codemod's hottest spot)."""
    from dali_migrate import cst_walk

    variables: set = set()
    for n in cst_walk.walk(module, not_into=_SCOPES):
        kind = type(n)
        if kind is cst.AssignTarget or kind is cst.For:
            if isinstance(n.target, _UNPACKED):
                variables |= read_names(n.target)
        elif kind is cst.AnnAssign or kind is cst.AugAssign:
            if isinstance(n.target, cst.Name):
                variables |= read_names(n.target)
    per_statement = []
    for stmt in _top_level(module.body, headers=True):
        names: set = set()
        stack = [stmt]
        while stack:
            n = stack.pop()
            kind = type(n)
            if kind is cst.Name:
                names.add(n.value)
            elif kind is cst.AssignTarget and isinstance(n.target, _UNPACKED):
                continue  # `x = ...` binds x; `x.attr = ...` / `x[i] = ...` use it
            elif kind is cst.Attribute:
                stack.append(n.value)
            else:
                stack.extend(cst_walk.children(n))
        per_statement.append((stmt, names))
    return variables, per_statement


def _folded_bases(module: cst.Module, classes: dict, results: dict, needed_by: dict) -> set:
    """Classes without a define_graph (bases for the others) whose subclasses all convert and
    that nothing else of the file names: each subclass has them folded in, so they go."""
    parents = {n: {code(b.value) for b in c.bases} & set(classes) for n, c in classes.items()}

    def extends(name: str, base: str) -> bool:
        return any(p == base or extends(p, base) for p in parents[name])

    out = set()
    for name in classes:
        if not isinstance(results.get(name), _Abstract) or name in needed_by:
            continue
        subs = [n for n in classes if extends(n, name)]
        if not subs or any(not isinstance(results.get(n), cst.FunctionDef) or n in needed_by for n in subs):
            continue
        rest = [results[n] if n in subs else s for s in _top_level(module.body, headers=True)
                for n in [s.name.value if isinstance(s, cst.ClassDef) and classes.get(s.name.value) is s else None]
                if n != name]
        if not any(name in names_in(s) for s in rest):
            out.add(name)
    return out


def _class_result(cls: cst.ClassDef, names, catalog, classes: dict, taken: frozenset, module: cst.Module):
    """The class as a @pipeline_def function, or why not (a _NotSimple).

    engine._convert_with_legacy normalizes the same file once per pass (the passes differ in which
    pipelines they leave alone), and the answer for a class depends only on the file as written
    and the names it spells, the same in every pass: it is worked out once per conversion."""
    try:
        return _class_to_pipeline(cls, names, catalog, classes, set(taken), _used_outside(module, cls))
    except _NotSimple as e:
        return e


def _top_level(stmts, headers: bool = False):
    """The module's statements, those of its top-level ``if``/``try`` blocks in their place: a
    Pipeline subclass defined under ``if dali_available:`` (or in the ``try`` that imports DALI)
    is still defined once, when the module is imported. ``headers``: with the ``if`` tests and the
    ``except`` types too (what else reads names there)."""
    for stmt in stmts:
        if isinstance(stmt, cst.If):
            for test, body in _if_chain(stmt):
                if headers and test is not None:
                    yield test
                yield from _top_level(body, headers)
        elif isinstance(stmt, cst.Try):
            yield from _top_level(stmt.body.body, headers)
            for handler in stmt.handlers:
                if headers and handler.type is not None:
                    yield handler.type
                yield from _top_level(handler.body.body, headers)
            for part in (stmt.orelse, stmt.finalbody):
                if part is not None:
                    yield from _top_level(part.body.body, headers)
        else:
            yield stmt


def _rebuilt(stmts, replace) -> list:
    """``stmts`` with each statement :func:`_top_level` gives replaced by ``replace(stmt)`` (a
    list of statements); the ``if``/``try`` blocks around them kept."""

    def block(b):
        return b.with_changes(body=_rebuilt(b.body, replace))

    def branch(node):
        if isinstance(node, cst.If):
            return node.with_changes(body=block(node.body), orelse=None if node.orelse is None else branch(node.orelse))
        return node.with_changes(body=block(node.body))  # an Else

    out: list = []
    for stmt in stmts:
        if isinstance(stmt, cst.If):
            out.append(branch(stmt))
        elif isinstance(stmt, cst.Try):
            out.append(stmt.with_changes(
                body=block(stmt.body),
                handlers=[h.with_changes(body=block(h.body)) for h in stmt.handlers],
                orelse=None if stmt.orelse is None else stmt.orelse.with_changes(body=block(stmt.orelse.body)),
                finalbody=None if stmt.finalbody is None else stmt.finalbody.with_changes(body=block(stmt.finalbody.body)),
            ))
        else:
            out.extend(replace(stmt))
    return out


def rewrite_classes(module: cst.Module, names, catalog, found: list, skip: set, taken: frozenset = frozenset()) -> cst.Module:
    # The file's Pipeline subclasses and their subclasses (a base is defined before them).
    classes: dict = {}
    for stmt in _top_level(module.body):
        if isinstance(stmt, cst.ClassDef) and any(
            names.qualify(b.value) in PIPELINE_CLASS or code(b.value) in classes for b in stmt.bases
        ):
            classes[stmt.name.value] = stmt
    results: dict = {}
    for name, cls in classes.items():
        if name not in skip:
            results[name] = cst_walk.remembered(
                lambda c: _class_result(c, names, catalog, classes, taken, module), cls,
                key=(_class_result, taken, id(module)),  # (the file as written lives as long as the memo)
            )
    # A class that stays a class needs its bases to stay classes.
    needed_by: dict = {}

    def keep_bases(cls: cst.ClassDef, child: str) -> None:
        for b in cls.bases:
            base = code(b.value)
            if base in classes and base not in needed_by:
                needed_by[base] = child
                keep_bases(classes[base], child)

    for name, cls in classes.items():
        if name in skip or (isinstance(results.get(name), _NotSimple) and not isinstance(results.get(name), _Abstract)):
            keep_bases(cls, name)
    removed = _folded_bases(module, classes, results, needed_by)

    def replace(stmt) -> list:
        name = stmt.name.value if isinstance(stmt, cst.ClassDef) else None
        result = results.get(name) if name is not None and classes.get(name) is stmt else None
        if name in removed and classes.get(name) is stmt:
            return []
        if result is None:
            return [stmt]
        if isinstance(result, _Abstract) and name in needed_by:
            found.append(Legacy(name=name, kind="class", anchor=stmt, reason=f"class {needed_by[name]} extends it and stays a class"))
            return [stmt]
        if isinstance(result, _NotSimple):
            found.append(Legacy(name=name, kind="class", anchor=stmt, reason=str(result)))
            return [stmt]
        if name in needed_by:
            found.append(Legacy(name=name, kind="class", anchor=stmt, reason=f"class {needed_by[name]} extends it and stays a class"))
            return [stmt]
        found.append(Legacy(name=name, kind="class", anchor=stmt))
        return [result]

    if not classes:
        return module
    return module.with_changes(body=_rebuilt(module.body, replace))


def _ways_to_pipeline_blocks(module: cst.Module, names) -> set:
    """ids of the nodes from ``module`` down to each indented block that has a ``Pipeline(...)``
    assignment among its statements, both included. Blocks are statements' parts, so the search
    does not go into expressions or small statements."""
    up: dict = {}  # id(node) -> its parent
    enter: set = set()
    stack = [module]
    while stack:
        node = stack.pop()
        if type(node) is cst.IndentedBlock and any(_pipeline_assign(s, names) is not None for s in node.body):
            cur = node
            while cur is not None and id(cur) not in enter:
                enter.add(id(cur))
                cur = up.get(id(cur))
        for kid in cst_walk.children(node):
            if not isinstance(kid, (cst.BaseExpression, cst.BaseSmallStatement)):
                up[id(kid)] = node
                stack.append(kid)
    return enter


def normalize(module: cst.Module, names, catalog, taken: set, skip: set) -> tuple:
    """(module with legacy pipelines as synthesized @pipeline_def functions, [Legacy])."""
    found: list = []
    if not any(q in PIPELINE_CLASS or any(c.startswith(q + ".") for c in PIPELINE_CLASS) for q in names.aliases.values()):
        # neither Pipeline nor a module it is reached through (`dali.pipeline.Pipeline`) is imported
        return module, found
    written = module
    module = rewrite_classes(module, names, catalog, found, skip, frozenset(taken))
    # rewrite_with_blocks changes nothing, and records nothing, in a block without a Pipeline(...)
    # assignment: only the way to each block with one is entered (a transformer that enters every
    # node rebuilds the whole file); the blocks it meets are still left in the same order
    enter = _ways_to_pipeline_blocks(module, names)

    class _Blocks(cst.CSTTransformer):
        def __init__(self):
            super().__init__()
            self.scopes: list = []  # (class or function entered, the instance a method gets)

        def on_visit(self, node) -> bool:
            if id(node) not in enter:
                return False
            if type(node) is cst.ClassDef:
                self.scopes.append((node, None))
            elif type(node) is cst.FunctionDef:
                method = bool(self.scopes) and type(self.scopes[-1][0]) is cst.ClassDef and not any(
                    m.matches(d.decorator, m.Name("staticmethod") | m.Name("classmethod")) for d in node.decorators)
                first = [*node.params.posonly_params, *node.params.params]
                self.scopes.append((node, first[0].name.value if method and first else None))
            return True

        def on_leave(self, original, updated):
            if self.scopes and self.scopes[-1][0] is original:
                self.scopes.pop()
            return super().on_leave(original, updated)

        def leave_IndentedBlock(self, original, updated):
            # a block of a method's (its own statements, not a nested function's or class's):
            # the graphs there may read the instance's attributes (_snapshot_attributes)
            instance = self.scopes[-1][1] if self.scopes else None
            return updated.with_changes(body=rewrite_with_blocks(list(updated.body), names, taken, found, skip,
                                                                 changed, instance))

    # (asked by _snapshot_attributes, once per normalize at most, only for a graph that reads self)
    changed = functools.cache(lambda: changed_in_place(module))
    if enter:
        module = module.visit(_Blocks())
    module = module.with_changes(body=rewrite_with_blocks(list(module.body), names, taken, found, skip, changed))
    if _same_statements(module, written):
        # nothing was rewritten: the file as written goes on, and with it what the engine has
        # already worked out about it (its index is not made again for an equal copy: issue 6)
        return written, found
    return module, found


def _same_statements(new: cst.Module, old: cst.Module) -> bool:
    return (
        len(new.body) == len(old.body) and all(a is b for a, b in zip(new.body, old.body))
        and new.header is old.header and new.footer is old.footer
        and (new.encoding, new.default_indent, new.default_newline, new.has_trailing_newline)
        == (old.encoding, old.default_indent, old.default_newline, old.has_trailing_newline)
    )
