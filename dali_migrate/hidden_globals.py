"""A module's variable that a pipeline reads and the converted function's settings would hide.

The converted function takes the pipeline settings as keyword parameters (``batch_size=``,
``num_threads=``, ``device_id=``, ``seed=``). A pipeline that reads a module's variable of one of
those names, with another value than the setting's, would read the parameter instead::

    batch_size = 1   # the source's batches: one video each

    @pipeline_def(batch_size=4)
    def read_clips(root):
        video, clips = fn.external_source(source=Reader(batch_size, root), num_outputs=2)

Python offers no name for the module's variable inside a function whose parameter has that name,
but ``globals()`` is the dict of the module the function is defined in, which a module-level
function's free names are looked up in first: ``Reader(globals()["batch_size"], root)`` reads what
the pipeline read, at the time it read it. This module writes that into the module-level
``@pipeline_def`` functions before they are analysed; the engine puts a pipeline back as it was
(and the reason it is not converted, from pipeline_analysis) when it does not convert after all.

Only where the name is certain to be the module's: the function is at module level, the module
binds the name at module level and has no ``globals`` of its own, and every mention of the name in
the function reads the function's scope (the reads of a lambda or comprehension that does not bind
the name itself included; none in a nested ``def`` or class, none in ``global`` / ``del``).
"""

from __future__ import annotations

import libcst as cst

from dali_migrate import cst_walk
from dali_migrate.helper_inlining import _module_bindings
from dali_migrate.pipeline_analysis import (
    PipelineInfo,
    _decorator_settings,
    _param_names,
    _synthetic,
    bind_settings,
    hidden_outside,
    pipeline_decorator,
)

# What makes a name under it something other than a read of the pipeline function's own scope
# (lambdas and comprehensions: where they bind it themselves, _binds_own).
_OWN_SCOPES = (cst.FunctionDef, cst.ClassDef)
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
_BINDS = (cst.Global, cst.Nonlocal, cst.Del, cst.ImportAlias, cst.Param, cst.AsName)


def _reads(func: cst.FunctionDef, key: str):
    """The Name nodes of ``func``'s body that read ``key`` in the function's own scope, or None when
    some mention of ``key`` there is anything else."""
    found = []
    stack = [(func.body, False)]
    while stack:
        node, odd = stack.pop()
        tp = type(node)
        if tp is cst.Name:
            if node.value == key:
                if odd:
                    return None
                found.append(node)
            continue
        if tp is cst.Attribute:  # `x` of `a.x` is no variable
            stack.append((node.value, odd))
            continue
        if tp is cst.Arg:  # nor the keyword of `f(x=1)`
            stack.append((node.value, odd))
            continue
        inner = odd or isinstance(node, _BINDS) or isinstance(node, _OWN_SCOPES) or _binds_own(node, key)
        stack.extend((child, inner) for child in cst_walk.children(node))
    return found


def _binds_own(node, key: str) -> bool:
    """Does a lambda or comprehension make ``key`` a name of its own? (Where it does not, the name
    in it is the enclosing function's, as in Python.)"""
    if isinstance(node, cst.Lambda):
        p = node.params
        return key in {q.name.value for q in [*p.posonly_params, *p.params, *p.kwonly_params]} | {
            q.name.value for q in (p.star_arg, p.star_kwarg) if isinstance(q, cst.Param)
        }
    if isinstance(node, _COMPREHENSIONS):
        found, comp = set(), node.for_in
        while comp is not None:
            found |= cst_walk.variables(comp.target)
            comp = comp.inner_for_in
        return key in found or any(type(n) is cst.NamedExpr for n in cst_walk.walk(node))
    return False


def _global_read(key: str) -> cst.Subscript:
    return cst.Subscript(
        value=cst.Call(func=cst.Name("globals")),
        slice=[cst.SubscriptElement(cst.Index(cst.SimpleString(f'"{key}"')))],
    )


def rewrite(module: cst.Module, names, skip: set) -> tuple:
    """(module with the hidden reads of the module-level pipelines not in ``skip`` read through
    ``globals()``, {pipeline name: [settings read so]})."""
    bound = _module_bindings(module)
    if bound.get("globals"):
        return module, {}
    done: dict = {}
    body = []
    for stmt in module.body:
        dec = pipeline_decorator(stmt, names) if isinstance(stmt, cst.FunctionDef) else None
        if dec is None or _synthetic(dec) or stmt.name.value in skip or bound.get(stmt.name.value) != 1:
            body.append(stmt)
            continue
        info = PipelineInfo(func=stmt, decorator=dec, settings={})
        _decorator_settings(dec, info)
        params = _param_names(stmt.params)
        bind_settings(info, params)
        hidden = [k for k in hidden_outside(info, params, module) if bound.get(k)]
        reads = {k: _reads(stmt, k) for k in hidden}
        reads = {k: r for k, r in reads.items() if r}
        if not reads:
            body.append(stmt)
            continue
        replace = {id(n): _global_read(k) for k, r in reads.items() for n in r}

        class _Swap(cst.CSTTransformer):
            def on_leave(self, original, updated):
                return replace.get(id(original), updated)

        body.append(stmt.with_changes(body=stmt.body.visit(_Swap())))
        done[stmt.name.value] = sorted(reads)
    if not done:
        return module, {}
    return module.with_changes(body=body), done
