"""``fn.external_source(source=...)`` in a pipeline without a reader -> the generator's loop draws
the source's batches and wraps each with ``ndd.as_batch(...)``.

    @pipeline_def(batch_size=4)                 def es_pipe(*, batch_size=4, ...):
    def es_pipe():                                  ctx = ndd.EvalContext(...)
        x = fn.external_source(                     source = Source(4)
            source=Source(4), layout="HWC")         for source_data in map(source, itertools.count()):
        return fn.flip(x)                               with ctx:
                                                            x = ndd.as_batch(source_data, layout="HWC")
                                                            outputs = (ndd.flip(x),)
                                                        yield outputs

The source is called (or iterated) exactly as the pipeline does (``nvidia/dali/external_source.py``,
DALI 2.4): a callable with a parameter gets the iteration number (``batch_info=True``: a
``types.BatchInfo(iteration, 0)``; ``batch=False``: one call per sample with
``types.SampleInfo(idx_in_epoch, idx_in_batch, iteration, 0)``); one without parameters is called
with none; an iterable is iterated once; a generator function is called once and its generator
iterated. When the source ends (StopIteration), ``pipe.run()`` raised StopIteration; the converted
generator ends, so ``next()`` raises it too. The epoch index is 0 throughout: only ``pipe.reset()``
after the end starts a new epoch, and ``pipe.reset()`` is not converted. ``parallel=True`` gives the
same data without worker processes (its prefetching only changes when the source runs).
``dtype=`` becomes ``as_batch(dtype=...)``, which converts where the pipeline checked: the same
for valid data.

Left to a person (marker): a reader in the same pipeline, several external sources, ``cycle=``,
``num_outputs=``, sources fed by ``pipe.feed_input`` (no ``source=``), and a source whose kind
(callable / iterable / generator function) cannot be seen in the file.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from dali_migrate.cst_util import code, fresh_name, kwarg
from dali_migrate.rules.base import OpCallRule

_KEEP = ("layout", "dtype", "device")
_DROP = ("name", "ndim", "no_copy", "blocking", "parallel", "prefetch_queue_depth", "cuda_stream",
         "use_copy_kernel", "bytes_per_sample_hint", "preserve", "batch", "batch_info", "source", "repeat_last",
         "seed")


def _bool_literal(call, key, default):
    arg = kwarg(call, key)
    if arg is None:
        return default
    if isinstance(arg.value, cst.Name) and arg.value.value in ("True", "False"):
        return arg.value.value == "True"
    return None


def _top_def(module, name):
    if module is None:
        return None
    found = [s for s in module.body if isinstance(s, (cst.FunctionDef, cst.ClassDef)) and s.name.value == name]
    bound_else = [s for s in module.body if isinstance(s, cst.SimpleStatementLine) and any(
        isinstance(b, cst.Assign) and any(m.matches(t.target, m.Name(name)) for t in b.targets) for b in s.body)]
    return found[0] if len(found) == 1 and not bound_else else None


def _positional_count(func: cst.FunctionDef, method: bool) -> int:
    params = [*func.params.posonly_params, *func.params.params]
    if method:
        params = params[1:]
    return len(params)


def _has_yield(func) -> bool:
    class _V(cst.CSTVisitor):
        found = False

        def visit_FunctionDef(self, node):
            return node is func

        def visit_Yield(self, node):
            _V.found = True

    func.visit(_V())
    return _V.found


def source_kind(expr, module):
    """('callable', n_args) / ('iterable', None) / ('generator_function', None), or a reason (str)."""
    if isinstance(expr, (cst.List, cst.Tuple)):
        return ("iterable", None)
    if isinstance(expr, cst.Name):
        d = _top_def(module, expr.value)
        if isinstance(d, cst.FunctionDef) and not d.decorators and d.asynchronous is None:
            if _has_yield(d):
                return ("generator_function", None)
            if d.params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or any(p.default is not None for p in d.params.params):
                return f"source {expr.value}() has *args or defaults: cannot tell how DALI calls it"
            return ("callable", _positional_count(d, False))
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name):
        d = _top_def(module, expr.func.value)
        if isinstance(d, cst.ClassDef) and not d.bases and not d.decorators:
            methods = {f.name.value: f for f in d.body.body if isinstance(f, cst.FunctionDef)}
            if "__iter__" in methods or "__getitem__" in methods:
                if "__call__" in methods:
                    return f"source {expr.func.value} is both iterable and callable: convert by hand"
                return ("iterable", None)
            if "__call__" in methods:
                call = methods["__call__"]
                if call.decorators or call.params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or any(
                    p.default is not None for p in call.params.params
                ):
                    return f"source {expr.func.value}.__call__ has *args, defaults or decorators: convert by hand"
                return ("callable", _positional_count(call, True))
    return f"cannot tell whether the source `{code(expr)}` is a callable, an iterable or a generator function: convert by hand"


def _plan(call, ctx):
    """(kind, n_args, batch, batch_info) or a reason."""
    if any(a.keyword is None for a in call.args):
        return "fn.external_source with positional arguments: convert by hand"
    source = kwarg(call, "source")
    if source is None:
        return "fn.external_source without source= (fed by pipe.feed_input): feed ndd.as_batch(...) of that data in the loop by hand"
    known = set(_KEEP) | set(_DROP)
    for a in call.args:
        if a.keyword.value == "cycle":
            if not (isinstance(a.value, cst.Name) and a.value.value in ("None", "False")):
                return "fn.external_source(cycle=...): rewinding the source is not converted yet; convert by hand"
        elif a.keyword.value not in known:
            return f"fn.external_source({a.keyword.value}=...) is not converted: convert by hand"
    parallel = _bool_literal(call, "parallel", False)
    batch = _bool_literal(call, "batch", not parallel if parallel is not None else None)
    batch_info = _bool_literal(call, "batch_info", False)
    if batch is None or batch_info is None or parallel is None:
        return "fn.external_source with batch= / batch_info= / parallel= not written as True/False: convert by hand"
    if kwarg(call, "device") is not None and not isinstance(kwarg(call, "device").value, cst.SimpleString):
        return "fn.external_source(device=...) not a string literal: convert by hand"
    kind = source_kind(source.value, getattr(ctx, "module", None))
    if isinstance(kind, str):
        return f"fn.external_source: {kind}"
    if kind[0] == "callable" and kind[1] > 1:
        return "fn.external_source: the source takes more than one argument"
    if kind[0] != "callable" and not batch:
        return "fn.external_source(batch=False) needs a callable source"
    return kind[0], kind[1], batch, batch_info


def _blocker(call, op, ctx):
    if op.fn_name != "external_source":
        return None
    planned = _plan(call, ctx)
    return planned if isinstance(planned, str) else None


def loop_source(call, ctx) -> tuple:
    """(statements before the loop, the loop's iterable expression, the per-batch name)."""
    kind, nargs, batch, batch_info = _plan(call, ctx)
    source = kwarg(call, "source").value
    src = fresh_name("source", ctx.taken)
    data = fresh_name("source_data", ctx.taken)
    types = ctx.types_module()
    setup = [cst.parse_statement(f"{src} = {code(source)}\n")]
    if kind == "iterable":
        expr = f"iter({src})"
    elif kind == "generator_function":
        expr = f"{src}()"
    else:
        count = ctx.need_import("itertools")
        if not batch:
            arg = f"{types}.SampleInfo(i * {ctx.batch_size} + j, j, i, 0)" if nargs else ""
            expr = f"map(lambda i: [{src}({arg}) for j in range({ctx.batch_size})], {count}.count())"
        elif nargs == 0:
            expr = f"map(lambda i: {src}(), {count}.count())"
        elif batch_info:
            expr = f"map(lambda i: {src}({types}.BatchInfo(i, 0)), {count}.count())"
        else:
            expr = f"map({src}, {count}.count())"
    return setup, cst.parse_expression(expr), data


def _rewrite(call, op, ctx):
    if op.fn_name != "external_source":
        return call
    setup, expr, data = loop_source(call, ctx)
    ctx.hoisted.extend(setup)
    ctx.source_loop = (expr, data)
    args = [cst.Arg(cst.Name(data))]
    for key in _KEEP:
        a = kwarg(call, key)
        if a is not None:
            args.append(a.with_changes(comma=cst.MaybeSentinel.DEFAULT))
    args = [a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for a in args[:-1]] + args[-1:]
    return cst.Call(func=ctx.ndd_attr("as_batch"), args=args)


RULE = OpCallRule(
    id="external-source",
    summary="fn.external_source(source=...) in a pipeline without a reader: the loop draws the source's batches, ndd.as_batch(...) wraps them",
    order=95,
    applies=lambda op: op.fn_name == "external_source",
    blocker=_blocker,
    rewrite=_rewrite,
)
