"""Marks pipeline-mode code that no rule converts yet, so ``--check`` and the report show it.

Legacy ``Pipeline`` subclasses and ``with pipe:`` graphs, framework iterators, serialization and
helpers that build operators are left as they are; each gets one marker saying what to do.
"""

from __future__ import annotations

import libcst as cst

from dali_migrate import cst_walk, markers, tf_consumers
from dali_migrate.cst_util import code, dotted
from dali_migrate.dali_imports import OPS, PIPELINE_CLASS
from dali_migrate.rules.base import DetectorRule

_ITERATOR_HINT = (
    "framework iterator over a pipeline: not converted yet; iterate the converted generator and use "
    "batch.torch() (PyTorch) or DLPack instead"
)
# What to do per framework plugin. The PyTorch and JAX DALIGenericIterator over one pipeline and
# Paddle's iterators are converted (torch-iterator, jax-iterator, paddle-iterator rules); what is
# left here is what those could not convert and what has no conversion yet because it cannot be
# checked against the real iterator here: DALI 2.4 has no MXNet plugin and its TF plugin must be
# compiled against TensorFlow.
_FRAMEWORK_HINTS = {
    "pytorch": "PyTorch iterator not converted (see the call-site marker): iterate the converted generator, "
               "outputs via batch.torch(), and keep the iterator's epoch length and last-batch policy by hand",
    "tf": "TensorFlow {iterator} runs the pipeline object itself (compiled DALI TF plugin): keep this pipeline in "
          "pipeline mode; to move to dynamic mode instead, make the dataset with tf.data.Dataset.from_generator over "
          "the converted generator, each output as np.asarray(ndd.as_tensor(batch.cpu())), output_signature= a "
          "tf.TensorSpec per output from output_shapes/output_dtypes (the generator yields what the dataset did, "
          "batch after batch across epochs)",
    "jax": "JAX iterator not converted (see the call-site marker): iterate the converted generator, make each batch "
           "{name: jax.dlpack.from_dlpack(ndd.as_tensor(batch))} and keep the iterator's epoch length and last-batch "
           "policy (FILL/DROP) by hand; over several devices, one converted generator per device (shard_id=, "
           "num_shards=) and jax.make_array_from_single_device_arrays",
    "mxnet": "MXNet iterator: iterate the converted generator and convert outputs via DLPack "
             "(mx.nd.from_dlpack(ndd.as_tensor(batch).__dlpack__())) into [mx.io.DataBatch(data=..., label=..., pad=...)]; "
             "keep the epoch length / last-batch policy by hand (DALI 2.4 ships no MXNet plugin: this code does not run "
             "with it as it is)",
    "paddle": "Paddle iterator not converted (see the call-site marker): iterate the converted generator and "
              "convert outputs via DLPack into [{name: tensor}] as DALI's iterator does "
              "(paddle.framework.core.from_dlpack(ndd.as_tensor(batch).__dlpack__()), a core DenseTensor; a GPU "
              "batch with stream=paddle.device.cuda.current_stream(device_id).cuda_stream); keep the epoch "
              "length / last-batch policy by hand (PARTIAL: cut the last batch to the epoch's samples; LoD outputs "
              "(name, level) by hand)",
}
# The decorators make the pipeline and the iterator in one: the function is a pipeline definition.
_DATA_ITERATOR_HINT = (
    "@{name}: not converted; the function is a pipeline definition. Without sharding=/devices=: make it "
    "@pipeline_def(num_threads=4, device_id=0) (the decorator's defaults) and pass one pipeline to "
    "DALIGenericIterator([pipe], output_map, ...) with the decorator's other arguments, which dali-migrate converts. "
    "With sharding=/devices=: one converted generator per device (device_id=i, shard_id=device.id, "
    "num_shards=device count, batch_size=global batch // device count) and "
    "jax.make_array_from_single_device_arrays per output{peek}"
)
_PEEK = "; peek() / peek_async() by hand"


_SEE_CALL_SITE = "(see the call-site marker)"


def _imported_pipeline(call: cst.Call, module: cst.Module, parents):
    """(name, module) when the iterator's pipeline argument is a variable its scope binds once, to a
    call of something another module gives (``pipe = COCOPipeline(...)`` after ``from src.coco_pipeline
    import COCOPipeline``): the iterator's marker then says where the pipeline is, not "see the
    call-site marker", which no rule of this file writes for it."""
    if not call.args or call.args[0].keyword is not None:
        return None
    arg = call.args[0].value
    if isinstance(arg, (cst.List, cst.Tuple)) and len(arg.elements) == 1:
        arg = arg.elements[0].value
    if not isinstance(arg, cst.Name):
        return None
    scope = parents.scope(call)
    values = [
        n for n in parents.names(arg.value)
        if isinstance(parents.of(n), cst.AssignTarget) and parents.scope(n) is scope
    ]
    if len(values) != 1:
        return None
    assign = parents.of(parents.of(values[0]))
    value = assign.value if isinstance(assign, cst.Assign) and len(assign.targets) == 1 else None
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        return _module_attribute(value.func, module, parents)
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
        return None
    callee = value.func.value
    found = []
    for stmt in module.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) and stmt.name.value == callee:
            return None
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    bound = alias.asname.name.value if alias.asname is not None else dotted(alias.name)
                    if bound == callee:
                        found.append("." * len(small.relative) + (dotted(small.module) if small.module else ""))
    return (callee, found[0]) if len(found) == 1 and not found[0].startswith("nvidia.") else None


def _module_attribute(func: cst.Attribute, module: cst.Module, parents):
    """(``mod.f``, the module) for a call of a function of another module through the name a
    module-level import binds (``import dali.dali_infer as dali`` and ``dali.infer_pipe(...)``,
    ``import loaders.dali`` and ``loaders.dali.make(...)``, ``from project import loaders`` and
    ``loaders.make(...)``), or None (a DALI module, a name the file binds otherwise)."""
    path = dotted(func)
    if path is None:
        return None
    head = path.split(".")[0]
    found = []
    for stmt in module.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) and stmt.name.value == head:
            return None
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Import):
                for alias in small.names:
                    name = dotted(alias.name)
                    if alias.asname is not None and alias.asname.name.value == head:
                        found.append(name)
                    elif alias.asname is None and name.split(".")[0] == head:
                        # `import a.b` binds `a`: the function is of the longest module imported
                        found.append(name if path.startswith(name + ".") else head)
            elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    if (alias.asname.name.value if alias.asname is not None else dotted(alias.name)) == head:
                        found.append("." * len(small.relative) + (dotted(small.module) if small.module else ""))
    if any(isinstance(parents.of(n), cst.AssignTarget) for n in parents.names(head)):
        return None
    if len(found) != 1 or found[0] == "nvidia" or found[0].startswith("nvidia."):
        return None
    return path, found[0]


def _unconverted_pipeline(call: cst.Call, module: cst.Module, parents, names, converted: set):
    """What replaces "see the call-site marker" when the iterator's pipeline was left as it was:
    no rule writes a call-site marker for a pipeline that is not converted, its own marker says
    why. The pipeline is the iterator's first argument (or ``pipelines=``, or the one pipeline
    of a list), made there or bound once in the iterator's scope (or, for ``self.<name>``, in the
    methods of its class) by a call of a pipeline function or Pipeline subclass of this file, of a
    ``@data_iterator`` function, of a variable holding such classes (``pipe_class(...)``), of a
    function or method of the class that makes one with ``Pipeline(...)`` (a ``with pipe:`` graph,
    also for a comprehension's list), of a pipeline method; or by ``Pipeline(...)`` itself; or a
    parameter of the function around the iterator, also through ``*args`` (the pipeline is made
    where that is called)."""
    arg = next((a for a in call.args if a.keyword is None or a.keyword.value == "pipelines"), None)
    if arg is None:
        return None
    scope = parents.scope(call)
    if arg.star:
        return _starred(call, scope)
    arg = arg.value
    if isinstance(arg, (cst.List, cst.Tuple)) and len(arg.elements) == 1:
        arg = arg.elements[0].value
    what = "its pipeline"
    if isinstance(arg, cst.Name):
        bindings = [n for n in parents.names(arg.value)
                    if isinstance(parents.of(n), (cst.AssignTarget, cst.Param)) and parents.scope(n) is scope]
        if len(bindings) != 1:
            return None
        holder = parents.of(bindings[0])
        if isinstance(holder, cst.Param):
            if isinstance(scope, cst.FunctionDef):
                return (f"(its pipeline comes in as `{arg.value}`, a parameter of {scope.name.value}(): it is made, and "
                        "converted or not, where that is called)")
            return None
        assign = parents.of(holder)
        arg = assign.value if isinstance(assign, cst.Assign) and len(assign.targets) == 1 else None
        if isinstance(arg, cst.ListComp):
            what, arg = "its pipelines", arg.elt  # `pipes = [make(...) for i in range(n)]`
    elif isinstance(arg, cst.Attribute):
        arg = _member_value(arg, scope, parents)
    if not isinstance(arg, cst.Call):
        return None
    if names.qualify(arg.func) in PIPELINE_CLASS:
        return f"({what}, made by Pipeline(...) and `with`, is not converted: its marker says why)"
    method = _self_method(arg.func, scope, parents)
    if method is not None:
        return _made_by_function(method, f"self.{method.name.value}()", what, names)
    callee = arg.func.value if isinstance(arg.func, cst.Name) else None
    if callee is None or callee in converted:
        return None
    for stmt in module.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) and stmt.name.value == callee:
            if isinstance(stmt, cst.ClassDef):
                return f"({what}, {callee}, is not converted: its marker says why)" if _pipeline_class(stmt, module, names) else None
            return _made_by_function(stmt, f"{callee}()", what, names)
    nested = [c for c in parents.find(cst.ClassDef) if c.name.value == callee]
    if len(nested) == 1 and _pipeline_class(nested[0], module, names):  # (under an `if`, in a function)
        return f"({what}, {callee}, is not converted: its marker says why)"
    defs = [f for f in parents.find(cst.FunctionDef) if f.name.value == callee]
    if not nested and len(defs) == 1 and parents.scope(defs[0]) is scope:
        # a pipeline function defined in the function that makes the iterator (sentry, pair_dali)
        found = _made_by_function(defs[0], f"{callee}()", what, names)
        if found is not None:
            return found
    return _class_variable(callee, scope, module, parents, names, converted, what)


def _pipeline_class(cls: cst.ClassDef, module: cst.Module, names, seen: frozenset = frozenset()) -> bool:
    """Whether ``cls`` derives from DALI's Pipeline, directly or through classes of the module."""
    for base in cls.bases:
        if names.qualify(base.value) in PIPELINE_CLASS:
            return True
        if isinstance(base.value, cst.Name) and base.value.value not in seen:
            found = [s for s in module.body if isinstance(s, cst.ClassDef) and s.name.value == base.value.value]
            if len(found) == 1 and _pipeline_class(found[0], module, names, seen | {cls.name.value}):
                return True
    return False


def _nested_in(cls: cst.ClassDef, parents) -> Optional[str]:
    """What holds ``cls`` when it is not a statement of the module itself (``a function``, ...)."""
    holder = parents.of(parents.of(cls))
    if holder is None or isinstance(parents.of(cls), cst.Module):
        return None
    kinds = {cst.FunctionDef: "a function", cst.ClassDef: "a class", cst.If: "an `if`", cst.Try: "a `try`",
             cst.With: "a `with` block", cst.For: "a loop", cst.While: "a loop", cst.Else: "an `else`"}
    return kinds.get(type(holder), "another statement")


def _stray_operator_reason(call: cst.Call, qualified: str, parents) -> str:
    """Why an ``ops.X(...)`` object made outside any Pipeline subclass is left: the legacy rule
    converts such objects as members of the subclass whose define_graph calls them (a transform
    class holding them, a factory function returning one, serve pipelines this file may not hold)."""
    from dali_migrate.catalog import load

    label = qualified[len("nvidia.dali."):]
    holders = []
    cur = parents.of(call)
    while cur is not None:
        if isinstance(cur, (cst.FunctionDef, cst.ClassDef)):
            holders.append(cur.name.value)
        cur = parents.of(cur)
    if holders and isinstance(parents.scope(call), cst.FunctionDef):
        where = f"in {'.'.join(reversed(holders))}()"
    else:
        where = f"in class {'.'.join(reversed(holders))}" if holders else "at module level"
    info = load().ops(qualified[len(OPS) + 1:])
    as_ndd = f" (ndd.{info.ndd_name})" if info is not None and info.ndd_name else ""
    return (f"legacy operator {label} made {where}: dali-migrate converts ops objects only as members of the "
            f"Pipeline subclass whose define_graph calls them; convert it{as_ndd} together with the pipeline that "
            f"calls it, by hand")


def _starred(call: cst.Call, scope):
    """The pipeline comes through the ``*args`` / ``**kwargs`` of the function around the iterator
    (a wrapper class's ``__init__(self, *args, **kwargs)``)."""
    if not isinstance(scope, cst.FunctionDef):
        return None
    params = scope.params
    given = {p.name.value: star for p, star in ((params.star_arg, "*"), (params.star_kwarg, "**")) if isinstance(p, cst.Param)}
    starred = [a for a in call.args if a.star]
    if not starred or any(not isinstance(a.value, cst.Name) or given.get(a.value.value) != a.star for a in starred):
        return None
    spelled = ", ".join(f"{a.star}{a.value.value}" for a in starred)
    return (f"(its pipeline comes in through `{spelled}` of {scope.name.value}(): it is made, and converted or not, "
            "where that is called)")


def _enclosing_class(scope, parents):
    """(the class, the name of ``self``) where ``scope`` is a method with a first parameter."""
    cls = parents.scope(scope) if isinstance(scope, cst.FunctionDef) else None
    if not isinstance(cls, cst.ClassDef) or not scope.params.params:
        return None
    return cls, scope.params.params[0].name.value


def _member_value(attr: cst.Attribute, scope, parents):
    """What ``self.<name>`` holds where the methods of its class bind it once to something other
    than None (``self.pipeline = self._create_pipeline()``), else None."""
    found = _enclosing_class(scope, parents)
    if found is None or not (isinstance(attr.value, cst.Name) and attr.value.value == found[1]):
        return None
    cls, me = found
    values = []
    for node in parents.find(cst.AssignTarget, within=cls):
        target = node.target
        if isinstance(target, cst.Attribute) and dotted(target) == f"{me}.{attr.attr.value}":
            assign = parents.of(node)
            if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
                return None
            if not (isinstance(assign.value, cst.Name) and assign.value.value == "None"):
                values.append(assign.value)
    return values[0] if len(values) == 1 else None


def _self_method(func, scope, parents):
    """The method of the class around ``scope`` that ``func`` (``self.make``) names, or None."""
    found = _enclosing_class(scope, parents)
    if found is None or not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                             and func.value.value == found[1]):
        return None
    methods = [s for s in found[0].body.body if isinstance(s, cst.FunctionDef) and s.name.value == func.attr.value]
    return methods[0] if len(methods) == 1 else None


def _made_by_function(func: cst.FunctionDef, spelled: str, what: str, names):
    """The words for a pipeline made by calling ``func``: a pipeline function or method, a
    ``@data_iterator`` function, or a function that builds one with ``Pipeline(...)``."""
    from dali_migrate.pipeline_analysis import pipeline_decorator

    name = spelled[:-2]
    if pipeline_decorator(func, names) is not None:
        return f"({what}, {name}, is not converted: its marker says why)"
    if _decorated_by_data_iterator(func, names):
        return f"({what} comes from {spelled}, a @data_iterator function, which is not converted: its marker says what to do)"
    if any(names.qualify(c.func) in PIPELINE_CLASS for c in _calls(func)):
        return (f"({what} {'are' if what.endswith('s') else 'is'} made by {spelled}, with Pipeline(...) and `with`, "
                "which is not converted: the marker there says why)")
    return None


def _calls(node) -> list:
    from dali_migrate import cst_walk

    return [n for n in cst_walk.walk(node) if isinstance(n, cst.Call)]


def _class_variable(callee: str, scope, module, parents, names, converted: set, what: str):
    """``pipe_class(...)`` where the scope binds ``pipe_class`` only to Pipeline subclasses or
    pipeline functions of this file (and None): none of them is converted (each has a marker saying
    why, on it or where the variable is bound to it)."""
    from dali_migrate.pipeline_analysis import pipeline_decorator

    defs = {s.name.value: s for s in module.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))}
    held = []
    for n in parents.names(callee):
        holder = parents.of(n)
        if isinstance(holder, cst.Param) and parents.scope(n) is scope:
            return None
        if not (isinstance(holder, cst.AssignTarget) and parents.scope(n) is scope):
            continue
        assign = parents.of(holder)
        value = assign.value if isinstance(assign, cst.Assign) and len(assign.targets) == 1 else None
        if isinstance(value, cst.Name) and value.value == "None":
            continue
        target = defs.get(value.value) if isinstance(value, cst.Name) else None
        if target is None or value.value in converted:
            return None
        pipeline = (pipeline_decorator(target, names) is not None if isinstance(target, cst.FunctionDef)
                    else any(names.qualify(b.value) in PIPELINE_CLASS or dotted(b.value) in defs for b in target.bases))
        if not pipeline:
            return None
        if value.value not in held:
            held.append(value.value)
    if not held:
        return None
    return (f"({what} {'are' if what.endswith('s') else 'is'} made by {callee}(...), which holds {' or '.join(held)} here: "
            f"{'it is' if len(held) == 1 else 'they are'} not converted: {'its marker says' if len(held) == 1 else 'their markers say'} why)")


def _framework_hint(q: str):
    """The hint for a plugin class or function that wraps pipelines, or None."""
    if not q.startswith("nvidia.dali.plugin."):
        return None
    parts = q.split(".")
    framework, last = parts[3] if len(parts) > 4 else "", parts[-1]
    if last in ("data_iterator", "peekable_data_iterator"):
        return _DATA_ITERATOR_HINT.format(name=last, peek=_PEEK if last.startswith("peekable") else "")
    if not (last.endswith("Iterator") or last.endswith("Dataset") or last.endswith("DatasetWithInputs")):
        return None
    hint = _FRAMEWORK_HINTS.get(framework, _ITERATOR_HINT).replace("{iterator}", last)
    return hint + _PEEK if last == "DALIGenericPeekableIterator" else hint


def _decorated_by_data_iterator(func: cst.FunctionDef, names) -> bool:
    for dec in func.decorators:
        target = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
        q = names.qualify(target) or ""
        if q.startswith("nvidia.dali.plugin.") and q.rsplit(".", 1)[-1] in ("data_iterator", "peekable_data_iterator"):
            return True
    return False


def _find(module: cst.Module, names, parents, converted: set) -> list:
    found = []
    seen_statements = set()

    def mark(node, reason):
        stmt = parents.statement(node) if not isinstance(node, (cst.ClassDef, cst.FunctionDef)) else node
        key = (id(stmt), reason)
        if stmt is not None and key not in seen_statements:
            seen_statements.add(key)
            found.append((stmt, reason))

    marked_classes = set()
    pipeline_classes = set()  # names, so that subclasses of the file's Pipeline subclasses count too
    defined_classes = {c.name.value for c in parents.find(cst.ClassDef)}
    for cls in parents.find(cst.ClassDef):
        if any(names.qualify(b.value) in PIPELINE_CLASS or dotted(b.value) in pipeline_classes for b in cls.bases):
            pipeline_classes.add(cls.name.value)
            marked_classes.add(id(cls))
            where = _nested_in(cls, parents)
            mark(cls, f"Pipeline subclass (ops + define_graph), not converted: it is defined inside {where}; dali-migrate converts "
                      f"Pipeline subclasses defined at the top level of a file: move it there, or convert by hand" if where else
                 "Pipeline subclass (ops + define_graph): not converted yet; rewrite define_graph as a loop over ndd calls by hand")
        elif (cls.bases and not any(dotted(b.value) in defined_classes for b in cls.bases)
              and not all(dotted(b.value) == "object" for b in cls.bases)
              and _pipeline_shaped(cls) and _uses_dali(cls, names)):
            # `class TrainPipeline(GenericPipeline)` with GenericPipeline imported from the project:
            # most likely a Pipeline, which a run over this file alone would otherwise pass by in silence
            marked_classes.add(id(cls))
            bases = ", ".join(dotted(b.value) or code(b.value) for b in cls.bases)
            mark(cls, f"{cls.name.value} looks like a DALI Pipeline subclass (define_graph(), or an __init__ taking batch_size "
                      f"and num_threads, with DALI operators), but its base ({bases}) is not defined in this file: if it is "
                      f"a Pipeline, convert this class together with it by hand")

    def inside_marked(node) -> bool:
        cur = parents.of(node)
        while cur is not None:
            if id(cur) in marked_classes:
                return True
            cur = parents.of(cur)
        return False

    for call in parents.find(cst.Call):
        q = names.qualify(call.func)
        if q is None or inside_marked(call):
            continue
        if q in PIPELINE_CLASS:
            use = tf_consumers.fed_to_tf(module, names, parents).get(id(call))
            if use is not None:
                mark(call, f"Pipeline(...) built by hand: {use.reason()}")
            else:
                from dali_migrate.legacy import with_pipeline_reason

                why = with_pipeline_reason(call, parents)
                mark(call, f"Pipeline(...) built by hand (with pipe: / set_outputs), not converted: {why}" if why else
                     "Pipeline(...) built by hand (with pipe: / set_outputs): not converted yet; rewrite as a loop over ndd calls by hand")
        elif q.startswith(OPS + "."):
            mark(call, _stray_operator_reason(call, q, parents))
        elif _framework_hint(q) is not None:
            hint = _framework_hint(q)
            imported = _imported_pipeline(call, module, parents)
            if imported is not None and _SEE_CALL_SITE in hint:
                hint = hint.replace(_SEE_CALL_SITE, (
                    f"(its pipeline comes from {imported[0]}(), imported from {imported[1]}: dali-migrate converts one "
                    f"file at a time and cannot see that pipeline's batch size, reader or sources from here)"
                ))
            elif _SEE_CALL_SITE in hint:
                left = _unconverted_pipeline(call, module, parents, names, converted)
                if left is not None:
                    hint = hint.replace(_SEE_CALL_SITE, left)
            mark(call, hint)
        elif q.endswith(".serialize") or q.endswith("autoserialize"):
            mark(call, "serialized pipelines (e.g. for Triton) need pipeline mode: keep this pipeline as it is")
    from dali_migrate.pipeline_analysis import helpers_with_ops

    helpers = helpers_with_ops(module, names)
    here = _used_here(module, helpers, parents, names) if helpers else set()
    for name, func in helpers.items():
        if _decorated_by_data_iterator(func, names):
            continue  # a pipeline definition: the decorator's marker says what to do
        if _builds_a_pipeline(func, names):
            continue  # its operators are its own pipeline's (with pipe: ...): that pipeline's marker says why
        if _every_operator_marked(func, names, parents):
            continue  # an earlier run marked each of its operator lines (a DataNode left made for nothing)
        if name in here:
            left = _unconverted_callers(name, module, names, converted)
            mark(
                func,
                f"{name}() builds DALI operators with fn.*, which only works inside a pipeline: convert it with the pipelines that call it (ndd calls, batch_size= on random ops)"
                + (f"; {', '.join(f'{c}()' for c in left)}, which call{'s' if len(left) == 1 else ''} it, "
                   f"{'is' if len(left) == 1 else 'are'} not converted: see the marker there" if left else ""),
            )
        else:
            mark(func, f"{name}() builds DALI operators with fn.* and nothing in this file calls it: it serves pipelines of "
                       f"other modules, and dali-migrate converts one file at a time. Keep it while they stay in pipeline "
                       f"mode (as one given to TensorFlow's DALIDataset or DALIIterator must); where one is converted, write "
                       f"its operators into it as ndd calls (batch_size= on random ops)")
    for dec in parents.find(cst.Decorator):
        target = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
        q = names.qualify(target) or ""
        if q.endswith("autoserialize"):
            mark(parents.of(dec), "@autoserialize: serving (Triton) needs pipeline mode; keep this pipeline as it is")
        elif not isinstance(dec.decorator, cst.Call) and _framework_hint(q) is not None:
            mark(parents.of(dec), _framework_hint(q))  # `@data_iterator` without arguments
    return found


def _every_operator_marked(func: cst.FunctionDef, names, parents) -> bool:
    """Whether each ``fn.*`` call in ``func`` is in a statement that carries a marker already: a
    converted pipeline's leftover, marked when it was converted (legacy._dead_data_nodes); marking
    the function too would make a second run write what the first did not."""
    calls = [c for c in parents.find(cst.Call, within=func) if names.fn_op(c.func) is not None]
    return bool(calls) and all(markers.on(parents.statement(c)) for c in calls)


def _pipeline_shaped(cls: cst.ClassDef) -> bool:
    """A ``define_graph`` method, or an ``__init__`` that hands a Pipeline's batch_size and
    num_threads on to its base (a torch Dataset wrapping a pipeline takes them, but keeps them)."""
    if not isinstance(cls.body, cst.IndentedBlock):
        return False
    for s in cls.body.body:
        if isinstance(s, cst.FunctionDef) and s.name.value == "define_graph":
            return True
        if isinstance(s, cst.FunctionDef) and s.name.value == "__init__":
            # (not a class or function it defines: gluon-detector's __init__ makes a Pipeline of its own)
            for call in cst_walk.walk(s.body, not_into=(cst.ClassDef, cst.FunctionDef, cst.Lambda)):
                if (type(call) is cst.Call and type(call.func) is cst.Attribute and call.func.attr.value == "__init__"
                        and {"batch_size", "num_threads"} <= {n for a in call.args for n in cst_walk.names(a)}):
                    return True
    return False


def _uses_dali(cls: cst.ClassDef, names) -> bool:
    return any(
        type(n) is cst.Call and (names.fn_op(n.func) is not None or (names.qualify(n.func) or "").startswith("nvidia.dali."))
        for n in cst_walk.walk(cls)
    )


def _builds_a_pipeline(func: cst.FunctionDef, names) -> bool:
    """``func`` makes a ``Pipeline(...)`` itself, or defines a pipeline function (a converted ``with``
    block among them): operators it calls outside it feed that pipeline (DataNodes made before its
    ``with`` block), or nothing (one made and never used); they serve no other module."""
    from dali_migrate.pipeline_analysis import pipeline_decorator

    return any(
        type(n) is cst.Call and names.qualify(n.func) in PIPELINE_CLASS
        or type(n) is cst.FunctionDef and n is not func and pipeline_decorator(n, names) is not None
        for n in cst_walk.walk(func)
    )


def _unconverted_callers(helper: str, module: cst.Module, names, converted: set) -> list:
    """The module-level pipeline functions that call ``helper`` and were not converted."""
    from dali_migrate.helper_inlining import _called_by_name
    from dali_migrate.pipeline_analysis import pipeline_decorator

    return [
        s.name.value for s in module.body
        if isinstance(s, cst.FunctionDef) and s.name.value not in converted
        and pipeline_decorator(s, names) is not None and helper in _called_by_name(s)
    ]


def _used_here(module: cst.Module, helpers: dict, parents, names) -> set:
    """The helpers that code of this file calls: other than from functions that build operators
    (through each other too) that nothing here calls."""
    from dali_migrate import call_sites, helper_inlining

    defs = {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)}
    building = set(helper_inlining._building(module, names)) | set(helpers)
    callers: dict = {}  # function -> names of the module's functions that mention it (None: other code)
    for name in building:
        for ref in call_sites._references(name, parents):
            if name in defs and ref is defs[name].name:
                continue
            top = ref
            while parents.of(top) is not None and not isinstance(parents.of(top), cst.Module):
                top = parents.of(top)
            callers.setdefault(name, set()).add(top.name.value if isinstance(top, cst.FunctionDef) and top is defs.get(top.name.value) else None)
    here = {name for name, by in callers.items() if None in by or any(c not in building for c in by)}
    grew = True
    while grew:
        grew = False
        for name, by in callers.items():
            if name not in here and not by.isdisjoint(here):
                here.add(name)
                grew = True
    return here


RULE = DetectorRule(
    id="not-yet-converted",
    summary="marks pipeline-mode code no rule converts yet (Pipeline subclasses, ops, iterators, serialization)",
    order=200,
    find=_find,
)
