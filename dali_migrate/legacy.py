"""Legacy pipeline forms rewritten, in memory, as the equivalent ``@pipeline_def`` function, so
the one conversion path handles them:

- ``pipe = Pipeline(...)`` followed by ``with pipe:`` ... ``pipe.set_outputs(...)``;
- ``class P(Pipeline)`` with ``ops.X(...)`` members made in ``__init__`` and called in
  ``define_graph``.

The rewritten form is only a step: the engine keeps it only if the synthesized pipeline then
converts completely; otherwise the original code stays as it was, with markers.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import libcst as cst
import libcst.matchers as m

from dali_migrate.cst_util import attr_chain, code, names_in
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

    def find_anchor(self, module: cst.Module):
        """The anchor's counterpart in ``module`` (transformers rebuild nodes, so not by identity)."""
        if isinstance(self.anchor, cst.ClassDef):
            matches = m.findall(module, m.ClassDef(name=m.Name(self.name)))
        else:
            text = code(self.anchor)
            matches = [n for n in m.findall(module, m.SimpleStatementLine()) if code(n) == text]
        return matches[0] if matches else None


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


def _pipeline_assign(stmt, names) -> Optional[tuple]:
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign)):
        return None
    assign = stmt.body[0]
    if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
        return None
    if not isinstance(assign.value, cst.Call) or names.qualify(assign.value.func) not in PIPELINE_CLASS:
        return None
    return assign.targets[0].target.value, assign.value


def _with_block(stmt, var: str) -> bool:
    return (
        isinstance(stmt, cst.With)
        and len(stmt.items) == 1
        and m.matches(stmt.items[0].item, m.Name(var))
        and stmt.items[0].asname is None
    )


def _set_outputs(stmt, var: str) -> Optional[list]:
    if (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and m.matches(stmt.body[0], m.Expr(m.Call(func=m.Attribute(value=m.Name(var), attr=m.Name("set_outputs")))))
    ):
        call = stmt.body[0].value
        if any(a.star or a.keyword for a in call.args):
            return None
        return [a.value for a in call.args]
    return None


def _uses_dali(stmt, names, graph_names: set) -> bool:
    if names_in(stmt) & graph_names:
        return True
    return bool(m.findall(stmt, m.Call(func=m.MatchIfTrue(lambda f: names.fn_op(f) is not None))))


def rewrite_with_blocks(body: list, names, taken: set, found: list, skip: set) -> list:
    """One block's statements with each ``with pipe:`` graph replaced by a synthesized pipeline."""
    out = list(body)
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
        with_stmt = out[j]
        inner = list(with_stmt.body.body) if isinstance(with_stmt.body, cst.IndentedBlock) else []
        outputs = _set_outputs(inner[-1], var) if inner else None
        kwargs = _kwargs_from_pipeline_call(call)
        name = f"{var}_batches"
        if name in taken:
            name = f"{var}_batches_{len(taken)}"
        if outputs is None or kwargs is None or name in skip:
            i = j + 1
            continue
        # Operator calls between Pipeline(...) and `with` belong to the graph too.
        graph_names: set = set()
        pre, kept = [], []
        for stmt in out[i + 1 : j]:
            if _uses_dali(stmt, names, graph_names):
                pre.append(stmt)
                graph_names |= names_in(stmt)
            else:
                kept.append(stmt)
        func = cst.FunctionDef(
            name=cst.Name(name),
            params=cst.Parameters(),
            body=cst.IndentedBlock([*pre, *inner[:-1], _return(outputs)]),
            decorators=[_decorator(kwargs)],
            leading_lines=out[i].leading_lines,
        )
        assign = out[i].with_changes(
            body=[out[i].body[0].with_changes(value=cst.Call(func=cst.Name(name)))], leading_lines=[cst.EmptyLine()]
        )
        taken.add(name)
        found.append(Legacy(name=name, kind="with", anchor=out[i]))
        out[i : j + 1] = [func, assign, *kept]
        i += 3 + len(kept)
    return out


# -- Pipeline subclasses ----------------------------------------------------------------------


class _NotSimple(Exception):
    pass


def _method(cls: cst.ClassDef, name: str) -> Optional[cst.FunctionDef]:
    for stmt in cls.body.body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
            return stmt
    return None


def _fn_call_for_op(op_call: cst.Call, invocation: cst.Call, names, catalog) -> cst.Call:
    ops_path = names.ops_op(op_call.func)
    info = catalog.ops(ops_path) if ops_path else None
    if info is None:
        raise _NotSimple(f"unknown legacy operator ops.{ops_path}")
    args = [*invocation.args, *op_call.args]
    seen = set()
    for a in args:
        if a.keyword is not None:
            if a.keyword.value in seen:
                raise _NotSimple(f"ops.{ops_path}: argument {a.keyword.value}= given twice")
            seen.add(a.keyword.value)
    positional = [a for a in args if a.keyword is None]
    keywords = [a for a in args if a.keyword is not None]
    args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in [*positional, *keywords]]
    return cst.Call(func=attr_chain(f"{SYNTHETIC_FN}.{info.fn_name}"), args=args)


def _class_to_pipeline(cls: cst.ClassDef, names, catalog) -> cst.FunctionDef:
    other = [
        s.name.value for s in cls.body.body
        if isinstance(s, cst.FunctionDef) and s.name.value not in ("__init__", "define_graph")
    ]
    if other:
        raise _NotSimple(f"the class also defines {', '.join(o + '()' for o in other)}; only __init__ + define_graph classes are converted (feed_input/iter_setup: not yet), convert by hand")
    if len(cls.bases) != 1:
        raise _NotSimple("the class has several base classes")
    init, graph = _method(cls, "__init__"), _method(cls, "define_graph")
    if init is None or graph is None:
        raise _NotSimple("the class needs both __init__ and define_graph to be converted")
    params = init.params
    if not params.params or params.params[0].name.value != "self":
        raise _NotSimple("__init__ without self")
    self_name = "self"
    settings, ops_members, values, setup = None, {}, {}, []
    param_names = {p.name.value for p in [*params.params[1:], *params.kwonly_params, *params.posonly_params]}
    for stmt in init.body.body:
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
            small = stmt.body[0]
            if m.matches(small, m.Expr(m.Call(func=m.Attribute(value=m.Call(func=m.Name("super")), attr=m.Name("__init__"))))):
                settings = _kwargs_from_pipeline_call(small.value)
                if settings is None:
                    raise _NotSimple("super().__init__ with *args/**kwargs")
                continue
            if (
                isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and m.matches(small.targets[0].target, m.Attribute(value=m.Name(self_name)))
            ):
                attr = small.targets[0].target.attr.value
                if isinstance(small.value, cst.Call) and names.ops_op(small.value.func):
                    ops_members[attr] = small.value
                    continue
                if self_name in names_in(small.value):
                    raise _NotSimple(f"self.{attr} is computed from other members")
                if attr in param_names and not m.matches(small.value, m.Name(attr)):
                    raise _NotSimple(f"self.{attr} shadows the parameter {attr}")
                values[attr] = small.value
                if not m.matches(small.value, m.Name(attr)):
                    setup.append(stmt.with_changes(body=[cst.Assign([cst.AssignTarget(cst.Name(attr))], small.value)]))
                continue
        if self_name in names_in(stmt):
            raise _NotSimple(f"__init__ does more than create operators and store values: {code(stmt).strip()[:60]}")
        setup.append(stmt)
    if settings is None:
        raise _NotSimple("__init__ does not call super().__init__(...)")

    class _Graph(cst.CSTTransformer):
        def leave_Call(self, original, updated):
            if m.matches(original.func, m.Attribute(value=m.Name(self_name))) and original.func.attr.value in ops_members:
                return _fn_call_for_op(ops_members[original.func.attr.value], updated, names, catalog)
            return updated

        def leave_Attribute(self, original, updated):
            if m.matches(original.value, m.Name(self_name)):
                attr = original.attr.value
                if attr in values:
                    return cst.Name(attr)
                if attr not in ops_members:
                    raise _NotSimple(f"define_graph uses self.{attr}, which __init__ does not set")
            return updated

    gparams = graph.params
    if len(gparams.params) != 1 or gparams.kwonly_params or gparams.star_arg not in (cst.MaybeSentinel.DEFAULT, None):
        raise _NotSimple("define_graph takes arguments")
    new_body = [s.visit(_Graph()) for s in graph.body.body]
    if self_name in {n for s in new_body for n in names_in(s)}:
        raise _NotSimple("define_graph uses self in a way that cannot be followed")
    return cst.FunctionDef(
        name=cls.name,
        params=params.with_changes(params=params.params[1:]),
        body=cst.IndentedBlock([*setup, *new_body]),
        decorators=[_decorator(settings)],
        leading_lines=cls.leading_lines,
    )


def rewrite_classes(module: cst.Module, names, catalog, found: list, skip: set) -> cst.Module:
    body = []
    for stmt in module.body:
        if (
            isinstance(stmt, cst.ClassDef)
            and stmt.name.value not in skip
            and any(names.qualify(b.value) in PIPELINE_CLASS for b in stmt.bases)
        ):
            try:
                func = _class_to_pipeline(stmt, names, catalog)
            except _NotSimple as e:
                found.append(Legacy(name=stmt.name.value, kind="class", anchor=stmt, reason=str(e)))
                body.append(stmt)
                continue
            found.append(Legacy(name=stmt.name.value, kind="class", anchor=stmt))
            body.append(func)
            continue
        body.append(stmt)
    return module.with_changes(body=body)


def normalize(module: cst.Module, names, catalog, taken: set, skip: set) -> tuple:
    """(module with legacy pipelines as synthesized @pipeline_def functions, [Legacy])."""
    found: list = []
    if not any(q in PIPELINE_CLASS for q in names.aliases.values()):
        return module, found  # no Pipeline imported: nothing to rewrite (and no tree walk)
    module = rewrite_classes(module, names, catalog, found, skip)

    class _Blocks(cst.CSTTransformer):
        def leave_IndentedBlock(self, original, updated):
            return updated.with_changes(body=rewrite_with_blocks(list(updated.body), names, taken, found, skip))

    module = module.visit(_Blocks())
    module = module.with_changes(body=rewrite_with_blocks(list(module.body), names, taken, found, skip))
    return module, found
