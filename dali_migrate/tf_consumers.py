"""Pipelines that TensorFlow's DALI plugin runs: they stay in pipeline mode.

``dali_tf.DALIDataset(pipeline=pipe, ...)`` and the op ``dali_tf.DALIIterator()`` makes
(``daliop(pipeline=pipe, ...)``) take the Pipeline object itself and run it inside TensorFlow's
graph through DALI's compiled plugin: a dynamic-mode generator cannot stand in for it. A pipeline
given to them is not "not converted yet": it must stay as it is, and its marker says so.

DALI's TensorFlow examples hand the pipeline over some way from where it is made: kept on
``self`` by the class that wraps it (``self._pipe = dali.pipeline.Pipeline(...)`` in
``__init__``, ``DALIDataset(pipeline=self._pipe)`` in another method), or as DALI's "various
readers" notebook does, a class from a list written in the file, passed to a function that makes
one pipeline per GPU and gives each to the op::

    pipe_types = [[MXNetReaderPipeline, tf.float32, (0, 999)], ...]
    for pipe_name in pipe_types:
        test_batch = get_batch_test_dali(BATCH_SIZE, pipe_name)

    def get_batch_test_dali(batch_size, pipe_type):
        pipe_name, label_type, _ = pipe_type
        pipes = [pipe_name(batch_size=batch_size, ...) for device_id in range(N)]
        ...
        image, label = daliop(pipeline=pipes[d], ...)

:func:`fed_to_tf` follows the value given as ``pipeline=`` back to what made it, through the
bindings of names (each bound once in its scope: an assignment, unpacking, a ``for`` over a
container, a function's parameter, from every call of the function in the file), indexing of
containers written in the file (``pipes[d]``, ``pipe_type[0]``), attributes of ``self``
assigned once in the class, and calls of classes and functions of the file (a factory's
``return``). What it cannot follow it leaves out: every origin it names is one the file really
gives to TensorFlow.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import libcst as cst

from dali_migrate import call_sites
from dali_migrate.cst_util import kwarg, one_line_statement
from dali_migrate.dali_imports import PIPELINE_CLASS

_TF = "nvidia.dali.plugin.tf."
_DEPTH = 24


@dataclasses.dataclass(frozen=True)
class TfUse:
    plugin: str  # DALIDataset, DALIIterator...
    statement: cst.CSTNode  # the statement that gives the pipeline to it

    def reason(self) -> str:
        return (
            f"the pipeline is given to TensorFlow's {self.plugin} (`{one_line_statement(self.statement)}`), which runs the "
            f"pipeline object itself (DALI's compiled TensorFlow plugin): it stays in pipeline mode (the marker "
            f"there says how to move to dynamic mode instead)"
        )


def may_feed_tf(names) -> bool:
    """Whether a name the file imports can lead to TensorFlow's plugin (``nvidia.dali.plugin.tf.X``
    qualified through it): if none does, :func:`fed_to_tf` finds nothing, and its caller need not
    index the file for it."""
    return any(q.startswith(_TF) or _TF.startswith(q + ".") for q in names.aliases.values())


def fed_to_tf(module: cst.Module, names, parents) -> dict:
    """{origin: TfUse} for the pipelines the file gives to TensorFlow's plugin. An origin is the
    name of a Pipeline subclass or @pipeline_def function of the file, or ``id()`` of a
    ``Pipeline(...)`` call."""
    cache = parents.__dict__.setdefault("_fed_to_tf", {})
    if id(module) not in cache:
        cache[id(module)] = _Tracer(module, names, parents).run()
    return cache[id(module)]


class _Tracer:
    def __init__(self, module, names, parents):
        self.module, self.names, self.parents = module, names, parents
        self.pipeline_names = self._pipeline_names()

    def run(self) -> dict:
        found: dict = {}
        for call, plugin in self._consumers():
            arg = kwarg(call, "pipeline")
            if arg is None:
                positional = [a for a in call.args if a.keyword is None and not a.star]
                arg = positional[0] if positional else None
            if arg is None:
                continue
            for origin in self._origins(arg.value, (), 0, set()):
                found.setdefault(origin, TfUse(plugin, self.parents.statement(call)))
        return found

    # -- what the plugin is given -----------------------------------------------------------
    def _consumers(self) -> list:
        """(call that takes a pipeline, plugin name): DALIDataset(...) calls, and calls of the op
        DALIIterator() makes."""
        found = []
        for call in self.parents.find(cst.Call):
            q = self.names.qualify(call.func) or ""
            if not q.startswith(_TF):
                continue
            plugin = q.rsplit(".", 1)[-1]
            if "Dataset" in plugin:
                found.append((call, plugin))
            elif plugin.endswith("Iterator"):
                holder = self.parents.of(call)
                if isinstance(holder, cst.Call) and holder.func is call:
                    found.append((holder, plugin))
                elif isinstance(holder, cst.Assign) and holder.value is call and len(holder.targets) == 1 and isinstance(
                    holder.targets[0].target, cst.Name
                ):
                    var = holder.targets[0].target
                    for ref in call_sites._references(var.value, self.parents):
                        use = self.parents.of(ref)
                        if isinstance(use, cst.Call) and use.func is ref and self._binding(ref) is var:
                            found.append((use, plugin))
        return found

    def _pipeline_names(self) -> set:
        from dali_migrate.pipeline_analysis import pipeline_decorator

        found = {f.name.value for f in self.module.body if isinstance(f, cst.FunctionDef) and pipeline_decorator(f, self.names)}
        classes = [c for c in self.module.body if isinstance(c, cst.ClassDef)]
        grew = True
        while grew:
            grew = False
            for cls in classes:
                if cls.name.value not in found and any(
                    self.names.qualify(b.value) in PIPELINE_CLASS or (isinstance(b.value, cst.Name) and b.value.value in found)
                    for b in cls.bases
                ):
                    found.add(cls.name.value)
                    grew = True
        return found

    # -- where a value comes from -----------------------------------------------------------
    def _origins(self, expr, path: tuple, depth: int, seen: set) -> set:
        """The origins of ``expr`` (its element at ``path``: indexes into containers, None for
        any element) that can be followed."""
        key = (id(expr), path)
        if depth > _DEPTH or key in seen:
            return set()
        seen = seen | {key}
        depth += 1
        if isinstance(expr, cst.Name):
            return self._name(expr, path, depth, seen)
        if isinstance(expr, cst.Subscript):
            index = _index(expr)
            return self._origins(expr.value, (index, *path), depth, seen) if index != "?" else set()
        if isinstance(expr, (cst.List, cst.Tuple)):
            if not path:
                return set()  # the container itself is no pipeline
            items = [e.value for e in expr.elements if isinstance(e, cst.Element)]
            if path[0] is not None:
                items = items[path[0] : path[0] + 1] if 0 <= path[0] < len(items) else []
            return set().union(*(self._origins(v, path[1:], depth, seen) for v in items))
        if isinstance(expr, cst.ListComp):
            return self._origins(expr.elt, path[1:], depth, seen) if path else set()
        if isinstance(expr, cst.Attribute):
            return self._self_attribute(expr, path, depth, seen)
        if isinstance(expr, cst.Call) and not path:
            if self.names.qualify(expr.func) in PIPELINE_CLASS:
                return {id(expr)}
            made = set()
            for origin in self._origins(expr.func, (), depth, seen):
                if isinstance(origin, str):
                    made.add(origin)  # an instance of a pipeline class, a pipeline function's pipeline
            factory = self._factory(expr.func)
            if factory is not None:
                for ret in self.parents.find(cst.Return, within=factory):
                    if ret.value is not None and self.parents.scope(ret) is factory:
                        made |= self._origins(ret.value, (), depth, seen)
            return made
        return set()

    def _name(self, ref: cst.Name, path: tuple, depth: int, seen: set) -> set:
        binding = self._binding(ref)
        if binding is None:
            return set()
        holder = self.parents.of(binding)
        if isinstance(holder, (cst.FunctionDef, cst.ClassDef)) and holder.name is binding:
            return {binding.value} if binding.value in self.pipeline_names and not path else set()
        if isinstance(holder, cst.Param):
            return self._parameter(holder, path, depth, seen)
        where = _target_of(binding, self.parents)
        if where is None:
            return set()
        node, indexes = where
        if isinstance(node, cst.AssignTarget):
            value = self.parents.of(node).value
            return self._origins(value, (*indexes, *path), depth, seen)
        if isinstance(node, (cst.For, cst.CompFor)):
            return self._origins(node.iter, (None, *indexes, *path), depth, seen)
        return set()

    def _binding(self, ref: cst.Name):
        """The one Name node that binds the variable ``ref`` reads (in its function, else at the
        top of the file); None where there is none or more than one."""
        scope = self.parents.scope(ref)
        while True:
            bindings = [n for n in call_sites._references(ref.value, self.parents) if self._binds(n) and self._scope_of_binding(n) is scope]
            if isinstance(scope, (cst.FunctionDef, cst.Lambda)):
                bindings += [p.name for p in _params(scope) if p.name.value == ref.value]
            if bindings:
                return bindings[0] if len(bindings) == 1 else None
            if scope is None:
                return None
            scope = self.parents.scope(scope)
            while isinstance(scope, cst.ClassDef):  # a class body's names are not seen from its methods
                scope = self.parents.scope(scope)

    def _scope_of_binding(self, n: cst.Name):
        holder = self.parents.of(n)
        if isinstance(holder, (cst.FunctionDef, cst.ClassDef)) and holder.name is n:
            return self.parents.scope(holder)
        return self.parents.scope(n)

    def _binds(self, n: cst.Name) -> bool:
        holder = self.parents.of(n)
        if isinstance(holder, (cst.FunctionDef, cst.ClassDef)) and holder.name is n:
            return True
        if isinstance(holder, (cst.Param, cst.AsName, cst.ImportAlias, cst.AugAssign, cst.AnnAssign, cst.NamedExpr,
                               cst.Global, cst.Nonlocal, cst.NameItem, cst.Del)):
            return not isinstance(holder, cst.Param)  # parameters are found on their function
        return _target_of(n, self.parents) is not None

    def _parameter(self, param: cst.Param, path: tuple, depth: int, seen: set) -> set:
        func = self.parents.of(self.parents.of(param))
        if not isinstance(func, cst.FunctionDef) or call_sites._module_function(func.name.value, self.parents) is not func:
            return set()  # calls of a method, or of a function used other than called, are not all seen
        made = set()
        for ref in call_sites._references(func.name.value, self.parents):
            call = self.parents.of(ref)
            if ref is func.name or not isinstance(call, cst.Call):
                continue
            arg = call_sites._argument_for(call, func, param.name.value)
            value = arg.value if arg is not None else param.default
            if value is not None:
                made |= self._origins(value, path, depth, seen)
        return made

    def _self_attribute(self, expr: cst.Attribute, path: tuple, depth: int, seen: set) -> set:
        """``self.x`` in a method: what the class assigns to ``self.x``, where it does once."""
        if not (isinstance(expr.value, cst.Name) and expr.value.value == "self"):
            return set()
        method = self.parents.scope(expr)
        cls = self.parents.scope(method) if isinstance(method, cst.FunctionDef) else None
        if not isinstance(cls, cst.ClassDef):
            return set()
        values = []
        for target in self.parents.find((cst.AssignTarget, cst.AugAssign, cst.AnnAssign), within=cls):
            t = target.target
            if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self" and t.attr.value == expr.attr.value:
                holder = self.parents.of(target)
                if not isinstance(target, cst.AssignTarget) or len(holder.targets) != 1:
                    return set()
                values.append(holder.value)
        if len(values) != 1:
            return set()
        return self._origins(values[0], path, depth, seen)

    def _factory(self, func) -> Optional[cst.FunctionDef]:
        """The module-level function (not a pipeline) that ``func`` names, to follow its returns."""
        if not isinstance(func, cst.Name):
            return None
        binding = self._binding(func)
        holder = self.parents.of(binding) if binding is not None else None
        if isinstance(holder, cst.FunctionDef) and holder.name is binding and binding.value not in self.pipeline_names:
            return holder
        return None


def _params(func) -> list:
    p = func.params
    return [*p.posonly_params, *p.params, *p.kwonly_params, *(q for q in (p.star_arg, p.star_kwarg) if isinstance(q, cst.Param))]


def _index(sub: cst.Subscript):
    """The literal index of ``x[i]`` (an int), None for any other single index, "?" for slices."""
    if len(sub.slice) != 1 or not isinstance(sub.slice[0].slice, cst.Index):
        return "?"
    value = sub.slice[0].slice.value
    if isinstance(value, cst.Integer):
        return int(value.evaluated_value)
    return None


def _target_of(n: cst.Name, parents):
    """(the AssignTarget / For / CompFor whose target binds ``n``, [indexes from the target down
    to ``n``]) or None."""
    indexes: list = []
    cur, holder = n, parents.of(n)
    while isinstance(holder, (cst.Element, cst.Tuple, cst.List)):
        if isinstance(holder, (cst.Tuple, cst.List)):
            elements = list(holder.elements)
            if any(isinstance(e, cst.StarredElement) for e in elements):
                return None
            indexes.insert(0, elements.index(cur))
        cur, holder = holder, parents.of(holder)
    if isinstance(holder, (cst.AssignTarget, cst.For, cst.CompFor)) and holder.target is cur:
        return holder, indexes
    return None
