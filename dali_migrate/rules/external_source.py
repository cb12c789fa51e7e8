"""``fn.external_source`` -> the converted generator draws each source's batch every iteration and
copies it into a batch with ``ndd.batch(...)``, as a pipeline copies what its source returns
(``ndd.as_batch(...)``, which keeps the source's memory, where ``no_copy=True``): a source may fill
one buffer again for its next batch.

One source, no reader: the loop runs over the source's batches::

    @pipeline_def(batch_size=4)                 def es_pipe(*, batch_size=4, ...):
    def es_pipe():                                  ctx = ndd.EvalContext(...)
        x = fn.external_source(                     source = Source(4)
            source=Source(4), layout="HWC")         for source_data in map(source, itertools.count()):
        return fn.flip(x)                               with ctx:
                                                            x = ndd.batch(source_data, layout="HWC")
                                                            outputs = (ndd.flip(x),)
                                                        yield outputs

Beside a reader, with several sources, with ``cycle=`` or with a Pipeline subclass's
``iter_setup()``, each iteration starts by drawing one batch from every source, in a row, as a
pipeline runs its sources' callbacks before the graph::

        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            source_data = next(source_iter, end)
            source_data_2 = next(source_iter_2, end)
            if source_data is end or source_data_2 is end:
                return

(every source is drawn before the end is decided: a pipeline calls them all. It calls them in an
order of its own, a set's; the converted code calls them in the order they are written, one of the
orders a pipeline may take, and only sources that share nothing are converted together.)

The source is called (or iterated) exactly as the pipeline does (``nvidia/dali/external_source.py``
and ``_utils/external_source_impl.py``, DALI 2.4): a callable with a parameter gets the iteration
number (``batch_info=True``: a ``types.BatchInfo(iteration, 0)``; ``batch=False``: one call per
sample with ``types.SampleInfo(idx_in_epoch, idx_in_batch, iteration, 0)``); one without parameters
is called with none; an iterable is iterated once (``iter()`` once, then ``next()``); a generator
function is called once and its generator iterated. ``num_outputs=N``: the source gives N batches
(per sample: N samples) and output k is item k, with ``layout=`` / ``dtype=`` lists spread over the
outputs as DALI spreads them. ``cycle=True`` / ``"quiet"``: where the source ends it is rewound
(``iter(source)`` again, a generator function called again) and drawn again; only a rewound source
that is empty ends the pipeline. ``cycle="raise"``: it is rewound, and the pipeline stops there.

When a source ends (StopIteration), ``pipe.run()`` raised StopIteration; the converted generator
ends, so ``next()`` raises it too (and again on every later call, as ``pipe.run()`` does until
``pipe.reset()``; that call is removed where it restarts nothing, a generator function's spent
generator, and left to a person elsewhere: :func:`reset_blocker`, ``rules/pipe_reset.py``; see the
restartable form below for iterators). The epoch index is 0 throughout for the same reason.
Sources run when ``next()`` asks for their batch, not ``prefetch_queue_depth`` batches ahead, and
``parallel=True`` sources run in this process: the same data, at other times. ``dtype=`` is a
check in a pipeline (data of another type fails the run: "ExternalSource expected data of type
float16 and got: float"), where ``as_batch(dtype=...)`` would convert the data and go on; such a
source's batch goes through ``external_source_batch`` (written into the converted file: ``as_batch``
without the dtype, then the same check).
``device=`` goes to ``as_batch`` as written: a string literal, or a parameter of the pipeline
function that its body does not assign (``def bench(cb, device="gpu")``: the generator takes the
same parameter, so ``as_batch`` gets the value the pipeline got).

A source the pipeline function takes as a parameter (``def example(input_data):
fn.external_source(input_data, batch=False)``, called as ``example(lambda: ...)``) has the kind of
what the file's calls of the pipeline pass, where every mention of the pipeline is such a call and
all of them pass sources of one kind, called with as many arguments (lambdas, functions or
generator functions of the file, lists...); the converted generator takes it as the same parameter.
A call may also pass what a function of the file returns where that is a function it defines
(``source = synth_imgs_data(...)``, then ``pipeline(source, ...)``, as DALI's conv_perf notebook
does: :func:`_made_by_factory`): it has that function's kind.
So does a parameter of the function that builds the pipeline (``with pipe:`` in
``def ExternalSourcePipeline(..., external_data)``). An object of a class of the file has the kind
its methods give (``__iter__`` / ``__getitem__``: iterable; ``__call__``: callable, or a generator
function where it yields), made in the pipeline (``source=Reader(...)``), by the function that
builds it (a class that function defines too), or at module level (``eii = ExternalInputIterator(...)``).
An object other code can see (one made at module level, or one the building function uses
elsewhere) is converted only where a framework iterator drives the pipeline (below): a pipeline
draws ``prefetch_queue_depth`` batches ahead, a plain generator one per ``next()``, so that code
would see it at other points. A module-level object that the file reads nowhere else and no other
file imports, given to one pipeline made once at module level after it (a script's ``with pipe:``
under ``eii = ExternalInputIterator(...)``, in ``if __name__ == "__main__":`` too), is seen by
that pipeline alone, as one its building function makes: it converts (:func:`_seen_by_it_alone`).

A pipeline given to a framework iterator of the file (``rules/torch_iterator.py``) takes the form
an iterator resets (:class:`Restart`): where the pipeline raised StopIteration, the generator
yields None, and the next ``next()`` starts the sources' next epoch as ``pipe.reset()`` did
(callables from iteration 0 with the next epoch index; iterables and generators go on with the
iterator made once). The emitted ``PrefetchedPipeline`` keeps the pipeline's queue over it, and the
iterator class calls it where DALI's iterator calls the pipeline (``schedule_run``,
``share_outputs``, ``reset``): the same batches make each epoch, the sources run at the same points.
Not for a source beside a reader (where the source ends, DALI's pipeline does not run the reader,
the converted loop has read its batch), ``parallel=True`` sources (DALI's worker pool keeps what it
prefetched across ``reset()``), sources fed from outside, or a pipeline the file also runs itself.

An external source fed by a converted Pipeline subclass's ``iter_setup()`` (``dali_migrate/legacy.py``
synthesizes it with the batch that ``feed_input`` got) becomes ``ndd.as_batch(<that batch>, ...)``.

Sources fed from outside (no ``source=``: ``pipe.run(name=data)``, ``pipe.feed_input``) make the
pipeline a function of each run's data, ``ndd.batch(pipeline_inputs[name], ...)`` in place of the
call (``ndd.as_batch`` where ``no_copy=True``): see ``dali_migrate/fed_inputs.py``.

Left to a person (marker): a source without ``source=`` and without ``name=`` (fed through its
node), fed sources beside a reader or a sourced one, a source whose kind (callable / iterable / generator function) cannot be seen in the
file (for a parameter: a call passes something else, or calls pass sources of two kinds),
several sources that share a name, ``cycle=`` with a callable, ``num_outputs=`` whose outputs
are not unpacked on the spot, and arguments not written as literals where their value decides.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from typing import Optional

import libcst as cst
from dali_migrate import match as m

from dali_migrate import cst_walk, templates
from dali_migrate.cst_util import code, fresh_name, kwarg, one_line
from dali_migrate.legacy import SYNTHETIC_DECORATOR, SYNTHETIC_FEED, captured_def, iter_setup_draws
from dali_migrate.rules.base import OpCallRule

_KEEP = ("layout", "dtype", "device")
_DROP = ("name", "ndim", "no_copy", "blocking", "parallel", "prefetch_queue_depth", "cuda_stream",
         "use_copy_kernel", "bytes_per_sample_hint", "preserve", "batch", "batch_info", "source", "repeat_last",
         "seed", "cycle", "num_outputs", SYNTHETIC_FEED)
#: what _plan says of an external source that a converted class's iter_setup() feeds
FED = object()
_CYCLES = {"True": "quiet", "False": None, "None": None, "quiet": "quiet", "raise": "raise", "no": None}


# DALI 2.4: external_source(source=None, num_outputs=None, *, cycle=None, ...): the rest is keyword-only.
_POSITIONAL = ("source", "num_outputs")


def _arg(call: cst.Call, key: str) -> Optional[cst.Arg]:
    """The argument given for ``key``, by keyword or, for the positional parameters, by position."""
    found = kwarg(call, key)
    if found is not None or key not in _POSITIONAL:
        return found
    positional = [a for a in call.args if a.keyword is None and not a.star]
    i = _POSITIONAL.index(key)
    return positional[i] if i < len(positional) else None


def _bool_literal(call, key, default):
    arg = kwarg(call, key)
    if arg is None:
        return default
    if isinstance(arg.value, cst.Name) and arg.value.value in ("True", "False"):
        return arg.value.value == "True"
    return None


def _top_def(module, name):
    """The module's one top-level ``def``/``class`` of ``name``, where no top-level assignment
    binds the name too; else None."""
    if module is None:
        return None
    defs, assigned = _top_level(module)
    found = defs.get(name, ())
    return found[0] if len(found) == 1 and name not in assigned else None


def _top_level(module) -> tuple:
    """({name: [its top-level defs and classes]}, names top-level assignments bind), once per
    module: every source of every pipeline asks (the node is kept with the answer, so its id
    stays its own)."""
    hit = _top_cache.get(id(module))
    if hit is not None and hit[0] is module:
        return hit[1]
    defs: dict = {}
    assigned: set = set()
    for s in module.body:
        if isinstance(s, (cst.FunctionDef, cst.ClassDef)):
            defs.setdefault(s.name.value, []).append(s)
        elif isinstance(s, cst.SimpleStatementLine):
            for b in s.body:
                if isinstance(b, cst.Assign):
                    assigned.update(t.target.value for t in b.targets if isinstance(t.target, cst.Name))
    if len(_top_cache) >= 4:
        _top_cache.clear()  # a file's pipelines come together: older files are not asked about again
    _top_cache[id(module)] = (module, (defs, assigned))
    return defs, assigned


_top_cache: dict = {}  # id(module) -> (module, _top_level's answer)


def _is_name(node, name: str) -> bool:
    # what m.matches(node, m.Name(name)) says, without the cost of a matcher
    return isinstance(node, cst.Name) and node.value == name


def _module_instance(module, name) -> Optional[str]:
    """The class when ``name = SomeClass(...)`` is the module's only binding of ``name``."""
    if module is None:
        return None
    found = [
        small.value.func.value
        for s in module.body if isinstance(s, cst.SimpleStatementLine)
        for small in s.body
        if isinstance(small, cst.Assign) and any(_is_name(t.target, name) for t in small.targets)
        and isinstance(small.value, cst.Call) and isinstance(small.value.func, cst.Name)
    ]
    return found[0] if len(found) == 1 else None


def _positional_count(func: cst.FunctionDef, method: bool) -> int:
    params = [*func.params.posonly_params, *func.params.params]
    if method:
        params = params[1:]
    return len(params)


def _has_yield(func) -> bool:
    """Does ``func`` itself yield (not a function defined in it)?"""
    return any(
        type(n) is cst.Yield
        for part in cst_walk.children(func)
        for n in cst_walk.walk(part, not_into=(cst.FunctionDef,))
    )


def source_kind(expr, module, pipeline=None):
    """('callable', n_args) / ('iterable', None) / ('generator_function', None), or a reason (str).

    ``pipeline``: the pipeline function, which may have taken a source redefined later in the file
    as a parameter (legacy.captured_def), or take it from its callers (_parameter_kind).

    The answer depends on these nodes alone, and each source is asked about several times (its
    blocker, its plan, its rewrite, each pass): it is worked out once per conversion."""
    return cst_walk.remembered_with(_source_kind, expr, module, pipeline)


def _source_kind(expr, module, pipeline):
    if (
        isinstance(expr, cst.Name)
        and pipeline is not None
        and not _captured(pipeline, expr.value)
        and expr.value in _param_names(pipeline)
    ):
        return _parameter_kind(expr.value, module, pipeline)
    if isinstance(expr, (cst.List, cst.Tuple)) or _iter_call(expr, module):
        return ("iterable", None)
    if isinstance(expr, cst.Name) and pipeline is not None and _iter_call(_only_binding(pipeline, expr.value), module):
        # `self.data = iter(data)` in a Pipeline subclass: the iterator made once, when the
        # pipeline is (the converted code makes it where the pipeline was made, too)
        return ("iterable", None)
    if isinstance(expr, cst.Lambda):
        p = expr.params
        if p.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or p.star_kwarg is not None or p.kwonly_params or any(
            x.default is not None for x in (*p.posonly_params, *p.params)
        ):
            return "the source lambda has *args or defaults: cannot tell how DALI calls it"
        return ("callable", len(p.posonly_params) + len(p.params))  # a lambda never yields
    if isinstance(expr, cst.Name):
        d = _top_def(module, expr.value)
        if d is None and module is not None and pipeline is not None:
            d = captured_def(module, pipeline, expr.value)
        if isinstance(d, cst.FunctionDef) and not d.decorators and d.asynchronous is None:
            return _def_kind(d, expr.value)
        if d is None:
            found = _outer_source(expr.value, module, pipeline)
            if found is not None:
                return found
        if d is None and _module_instance(module, expr.value):
            return _shared_reason(expr.value, _module_instance(module, expr.value))
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name):
        d = _class_def(expr.func.value, module, pipeline)
        if d is not None:
            kind = _class_kind(d, expr.func.value)
            if kind is not None:
                return kind
        if module is not None and pipeline is not None:
            # source=make_callback(...) in the graph: a factory of the file that returns a function
            # it defines (per-worker callbacks for parallel=True are made so), called once when
            # the pipeline is made, in the converted code too. (Not a parameter's default, which
            # every pipeline made from the function would share: _parameter_kind.)
            kind = _factory_kind(expr, (), module)
            if kind is not None:
                return kind
    return f"cannot tell whether the source `{one_line(expr)}` is a callable, an iterable or a generator function: convert by hand"


def _iter_call(expr, module) -> bool:
    """``iter(x)``, Python's own iter (the file binds no other): an iterator, which DALI takes as
    an iterable (iter() of it is itself)."""
    return (
        isinstance(expr, cst.Call) and _is_name(expr.func, "iter") and len(expr.args) == 1
        and not expr.args[0].star and expr.args[0].keyword is None
        and module is not None and _binding_count(module, "iter") == 0
    )


def _only_binding(func: cst.FunctionDef, name: str):
    """The value of ``name = value``, a statement of ``func``'s body, where that is the one
    binding of ``name`` in ``func``; else None."""
    if _binding_count(func, name) != 1:
        return None
    for stmt in func.body.body:
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
            small = stmt.body[0]
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and _is_name(small.targets[0].target, name):
                return small.value
    return None


def _def_kind(d: cst.FunctionDef, label: str):
    """The kind of the (undecorated, not async) function ``d`` as a source, or a reason."""
    if _has_yield(d):
        return ("generator_function", None)
    if d.params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or any(p.default is not None for p in d.params.params):
        return f"source {label}() has *args or defaults: cannot tell how DALI calls it"
    return ("callable", _positional_count(d, False))


def _shared_reason(name: str, cls: str) -> str:
    return (
        f"the source `{name}` is an object made at module level, which every pipeline made from this "
        "code shares: a pipeline draws from it prefetch_queue_depth batches ahead, the converted generator one "
        f"batch per next(), so they would interleave differently; make it in the pipeline "
        f"(source={cls}(...)) or convert by hand"
    )


#: protocol methods that decide how DALI takes a source
_PROTOCOL = frozenset({"__iter__", "__getitem__", "__call__", "__next__"})


def _class_kind(d: cst.ClassDef, label: str):
    """The kind of an instance of the file's class ``d``, as DALI tells it (``__iter__`` or
    ``__getitem__``: an iterable; ``__call__``: a callable, or a generator function where it
    yields), None where its methods do not tell (no such method, a base class), or a reason."""
    if not all(_is_name(b.value, "object") for b in d.bases) or d.decorators or d.keywords:
        return None
    methods = {f.name.value: f for f in d.body.body if isinstance(f, cst.FunctionDef)}
    assigned = {
        t.target.value
        for s in d.body.body if isinstance(s, cst.SimpleStatementLine)
        for small in s.body if isinstance(small, cst.Assign)
        for t in small.targets if isinstance(t.target, cst.Name)
    }
    if assigned & _PROTOCOL:
        # `__iter__ = other`: a protocol method this reading does not see
        return f"source {label}: its class binds {sorted(assigned & _PROTOCOL)[0]} by assignment: convert by hand"
    # DALI's order (get_callback_from_source): a __call__ that is a generator function first, then
    # whatever iter() accepts, and only then a callable: an iterable's __call__ is never called
    call = methods.get("__call__")
    if call is not None and (call.decorators or call.params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or any(
        p.default is not None for p in call.params.params
    )):
        return f"source {label}.__call__ has *args, defaults or decorators: convert by hand"
    if call is not None and _has_yield(call):
        return ("generator_function", None)
    if "__iter__" in methods or "__getitem__" in methods:
        return ("iterable", None)
    if call is not None:
        return ("callable", _positional_count(call, True))
    return None


def _enclosing(module, func) -> Optional[cst.FunctionDef]:
    """The function whose body holds ``func`` as one of its statements (a pipeline built in a
    function: ``with pipe:`` there, or a nested ``@pipeline_def``), else None."""
    if module is None or func is None:
        return None
    # asked for every source of every pipeline: the file is read once (per conversion)
    return cst_walk.remembered(_statement_functions, module).get(id(func))


def _statement_functions(module) -> dict:
    """id(statement) -> the first function (in the walk's order) whose body holds it."""
    found: dict = {}
    for node in cst_walk.walk(module):
        if type(node) is cst.FunctionDef:
            for s in node.body.body:
                found.setdefault(id(s), node)
    return found


def _class_def(name: str, module, pipeline) -> Optional[cst.ClassDef]:
    """The file's class ``name``: a top-level one, or one the function that holds the pipeline
    defines in its body (bound nowhere else in that function)."""
    d = _top_def(module, name)
    if isinstance(d, cst.ClassDef):
        outer = _enclosing(module, pipeline)
        return d if outer is None or _binding_count(outer, name) == 0 else None
    if d is not None:
        return None
    outer = _enclosing(module, pipeline)
    if outer is None or _binding_count(outer, name) != 1:
        return None
    found = [s for s in outer.body.body if isinstance(s, cst.ClassDef) and s.name.value == name]
    return found[0] if found else None


def _binding_count(root, name: str) -> int:
    """How many times ``name`` is bound under ``root`` (a ``global``/``nonlocal`` counts as many)."""
    # asked for many names of the same roots (the whole file among them): the counts of every
    # name are gathered in one walk, kept per root for the conversion
    return cst_walk.remembered(_binding_counts, root).get(name, 0)


def _binding_counts(root) -> dict:
    counts: dict = {}

    def add(name: str, k: int = 1) -> None:
        counts[name] = counts.get(name, 0) + k

    def target(t):
        if isinstance(t, cst.Name):
            add(t.value)
        elif isinstance(t, (cst.Tuple, cst.List)):
            for e in t.elements:
                target(e.value)
        elif isinstance(t, cst.StarredElement):
            target(t.value)

    for n in cst_walk.walk(root):
        tp = type(n)
        if tp is cst.AssignTarget:
            target(n.target)
        elif tp in (cst.AnnAssign, cst.AugAssign, cst.NamedExpr, cst.For, cst.CompFor):
            target(n.target)
        elif tp is cst.AsName:
            target(n.name)
        elif tp in (cst.FunctionDef, cst.ClassDef) and n is not root:
            add(n.name.value)
        elif tp is cst.ImportAlias and n.asname is None:
            add(code(n.name).split(".")[0])
        elif tp in (cst.Global, cst.Nonlocal):
            for g in {g.name.value for g in n.names}:  # (once per statement, as many as it names it)
                add(g, 100)
        elif tp is cst.Del:
            for g in cst_walk.names(n.target):
                add(g)
    return counts


def _instance(value, name: str, module, pipeline) -> Optional[cst.ClassDef]:
    """The file's class that ``value`` (the expression ``name`` is assigned) makes an instance of."""
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
        return _class_def(value.func.value, module, pipeline)
    return None


def _outer_source(name: str, module, pipeline):
    """The kind of a source the pipeline finds outside itself by name: an instance of a class of
    the file made at module level (marked shared: see _Source.shared) or by the function that holds
    the pipeline, or that function's parameter (the kind its callers pass); None where neither."""
    if module is None:
        return None
    if pipeline is not None and (name in _param_names(pipeline) or name in _bound_names(pipeline.body)):
        return None
    outer = _enclosing(module, pipeline)
    if outer is not None:
        if name in _param_names(outer):
            if _synthesized(outer):
                return None
            return _parameter_kind(name, module, outer)
        if _binding_count(outer, name) == 0:
            outer = None  # a module-level name
        else:
            found = _assignments(outer.body.body, name)
            if len(found) != 1 or _binding_count(outer, name) != 1:
                return None
            cls = _instance(found[0][1], name, module, pipeline)
            kind = _class_kind(cls, name) if cls is not None else None
            if not isinstance(kind, tuple):
                return kind
            # Other code of the function that sees the object sees when the pipeline draws from it.
            uses = sum(1 for n in cst_walk.variable_nodes(outer) if n.value == name)
            inside = sum(1 for n in cst_walk.variable_nodes(pipeline) if n.value == name)
            return kind if uses - inside == 1 else (*kind, _local_shared_reason(name))
    if outer is None:
        own = _module_block(module, pipeline)
        # the statements of the pipeline's block (a `__main__` block's), then the file's
        for block in (own,) if own == tuple(module.body) else (own, tuple(module.body)):
            found = _assignments(block, name)
            if found:
                break
        if len(found) != 1 or _binding_count(module, name) != 1:
            return None
        cls = _instance(found[0][1], name, module, None)
        kind = _class_kind(cls, name) if cls is not None else None
        if isinstance(kind, tuple):
            return kind if _seen_by_it_alone(name, module, pipeline, block, found[0][0]) else (*kind, _shared_reason(name, cls.name.value))
        return kind
    return None


def _assignments(statements, name: str) -> list:
    """[(statement, value)] of each ``name = value`` among ``statements`` (not inside them)."""
    return [
        (s, small.value)
        for s in statements if isinstance(s, cst.SimpleStatementLine)
        for small in s.body if isinstance(small, cst.Assign) and len(small.targets) == 1
        and _is_name(small.targets[0].target, name)
    ]


#: module-level names other files of the project import, for the conversion running
_IMPORTED_ELSEWHERE: contextvars.ContextVar = contextvars.ContextVar("imported_elsewhere", default=frozenset())


@contextlib.contextmanager
def imported_elsewhere(names):
    """Within it, ``names`` (module-level names another file imports: a source object among them
    is seen by other code) hold for the conversion: engine.py wraps each conversion in it."""
    token = _IMPORTED_ELSEWHERE.set(frozenset(names or ()))
    try:
        yield
    finally:
        _IMPORTED_ELSEWHERE.reset(token)


def _module_block(module, pipeline) -> tuple:
    """The statements a module-level pipeline is one of: the file's, or those of a module-level
    ``if`` (``if __name__ == "__main__":``) that holds it; the file's where neither."""
    if pipeline is not None and pipeline not in module.body:
        for s in module.body:
            if type(s) is cst.If and isinstance(s.body, cst.IndentedBlock) and pipeline in s.body.body:
                return tuple(s.body.body)
    return tuple(module.body)


def _seen_by_it_alone(name: str, module, pipeline, block: tuple, binding) -> bool:
    """Whether the object a module-level ``name = Cls(...)`` makes is seen by one pipeline alone,
    made once: ``name`` read nowhere else in the file (nor imported by another file), the pipeline
    called once, by a statement of the same block after the binding, in no loop or function (a
    script's ``with pipe:`` graph over ``eii = ExternalInputIterator(...)``, as DALI's external
    source example writes it). Then no other code sees when the pipeline draws from it, as for an
    object the function making the pipeline makes and uses for nothing else."""
    if pipeline is None or name in _IMPORTED_ELSEWHERE.get():
        return False
    if sum(1 for n in cst_walk.variable_nodes(module) if n.value == name) != 2:
        return False  # (the binding and the one read, in the pipeline)
    if sum(1 for n in cst_walk.variable_nodes(pipeline) if n.value == name) != 1:
        return False
    calls = _pipeline_calls(module, pipeline)
    if isinstance(calls, str) or len(calls) != 1 or calls[0][1]:
        return False
    from dali_migrate import parents as parents_index

    call, index = calls[0][0], parents_index.build(module)  # (the index _pipeline_calls read)
    at = next((i for i, s in enumerate(block) if index.contains(s, call)), None)
    bound = next(i for i, s in enumerate(block) if s is binding)
    return at is not None and bound < at and not _loops_to(call, block[at])


def _local_shared_reason(name: str) -> str:
    return (
        f"the source `{name}` is used by other code of the function that makes the pipeline: a pipeline draws "
        "from it prefetch_queue_depth batches ahead, the converted generator one batch per next(), so that code "
        "would see it at another point; convert by hand"
    )


def _captured(func, name: str) -> bool:
    """``name`` is a source a ``with pipe:`` graph captured (legacy.py makes it a parameter whose
    default is the name itself); a converted class's constructor parameters are its callers'."""
    if not _synthesized(func):
        return False
    p = func.params
    return any(q.name.value == name and m.matches(q.default, m.Name(name)) for q in [*p.posonly_params, *p.params, *p.kwonly_params])


def _synthesized(func) -> bool:
    """A pipeline that dali_migrate/legacy.py made from a class or a ``with pipe:`` block: its
    parameters are the class's constructor's, or the sources it captured (captured_def)."""
    return bool(func.decorators) and m.matches(func.decorators[0].decorator, m.Call(func=m.Name(SYNTHETIC_DECORATOR)))


def _param_names(func) -> list:
    p = func.params
    return [q.name.value for q in [*p.posonly_params, *p.params, *p.kwonly_params]]


def _parameter_kind(name: str, module, pipeline):
    """The kind of the source a pipeline gets as its parameter ``name``: the kind every call of the
    pipeline in the file passes, or why it cannot be told.

    Every mention of the pipeline's name must be a call of it: one passed on (``partial(p, ...)``,
    a list of pipelines) may be called with anything. A module that imports the pipeline from this
    file cannot call the converted generator as a pipeline at all (``build()``, ``run()`` are gone),
    so its calls fail loudly rather than take a source of another kind."""
    why = f"the source `{name}` is a parameter of {pipeline.name.value}()"
    if any(name in _bound_names(stmt) for stmt in pipeline.body.body):
        return f"{why}, assigned again in its body: convert by hand"
    calls = _pipeline_calls(module, pipeline)
    if isinstance(calls, str):
        return f"{why}, which {calls}: cannot tell what its callers pass, convert by hand"
    if not calls:
        return f"{why}, which nothing in this file calls: cannot tell what its callers pass, convert by hand"
    params = pipeline.params
    kinds = {}
    for call, scopes in calls:
        arg = _argument_for(call, params, name)
        if isinstance(arg, str):
            return f"{why}: {one_line(call.func)}(...) {arg}: convert by hand"
        if arg is None:
            default = next((q.default for q in [*params.posonly_params, *params.params, *params.kwonly_params]
                            if q.name.value == name), None)
            if default is None or pipeline not in module.body:
                return f"{why}, and a call passes none: convert by hand"
            # A default is evaluated where the pipeline is defined: at the top of the file.
            arg, scopes, call = default, (), None
        if isinstance(arg, cst.Name) and any(_binds(scope, arg.value) for scope in scopes):
            kind = _made_by_factory(arg.value, call, scopes, module)
            if kind is None:
                return f"{why}, and a call passes `{arg.value}`, a name of the function it is called in: convert by hand"
            if isinstance(kind, str):  # an instance of the file's class, which does not convert
                return f"{why}, and a call passes `{arg.value}`: {kind}"
            kinds[kind] = arg
            continue
        # (a default's call made one function, which every pipeline made with it shares)
        kind = _factory_kind(arg, scopes, module) if isinstance(arg, cst.Call) and call is not None else None
        if kind is None:
            kind = source_kind(arg, module)
        if isinstance(kind, str):
            return f"{why}; a call of it passes one that dali-migrate cannot follow: {kind}"
        kinds[kind] = arg
    if len(kinds) > 1:
        passed = "; ".join(f"`{one_line(a)}`, {_kind_words(k)}" for k, a in kinds.items())
        return f"{why}, whose calls pass sources of different kinds ({passed}): convert by hand"
    return next(iter(kinds))




def _kind_words(kind) -> str:
    """A source kind as a message says it: ``a callable of 1 argument``."""
    what, count = kind if isinstance(kind, tuple) else (kind, None)
    if what == "callable" and count is not None:
        return f"a callable of {count} argument{'' if count == 1 else 's'}"
    return {"iterable": "an iterable", "callable": "a callable", "generator_function": "a generator function"}.get(what, str(what))


def _made_by_factory(name: str, call, scopes: tuple, module):
    """The kind of the source ``call`` (a call of the pipeline) passes as ``name``, a variable of
    the function the call is in that it binds once, to what a function of the file returns
    (:func:`_factory_kind`): ``source = synth_imgs_data(...)`` in DALI's conv_perf notebook; or to
    an instance of a class of the file (``eii = ExternalInputIterator(batch_size)``, then
    ``ExternalSourcePipeline(external_iterator=eii, ...)`` in DALI's external source examples). None
    where it is not that form; why not, where it is that form but the class does not convert.

    The variable is read only by the call that passes it on, and that call runs once per binding
    (no loop holds it that does not hold the binding too): the pipeline alone uses what it holds."""
    scope = scopes[-1] if scopes else None
    if call is None or type(scope) is not cst.FunctionDef or name in _param_names(scope) or _binding_count(scope, name) != 1:
        return None
    # (variables only: `eii=eii` passes it once, its keyword is no read)
    if sum(1 for n in cst_walk.variable_nodes(scope) if n.value == name) != 2:
        return _local_shared_reason(name)  # read elsewhere too (its binding and the argument are the two)
    found = [
        n for n in cst_walk.walk(scope)
        if type(n) is cst.Assign and len(n.targets) == 1 and _is_name(n.targets[0].target, name)
    ]
    if len(found) != 1 or not isinstance(found[0].value, cst.Call):
        return None
    if not _loops_to(call, scope) <= _loops_to(found[0], scope):
        return None
    made = found[0].value
    kind = _factory_kind(made, scopes, module)
    if kind is None and isinstance(made.func, cst.Name) and not any(_binds(s, made.func.value) for s in scopes[:-1]):
        cls_name = made.func.value
        d = _top_def(module, cls_name)
        if not (isinstance(d, cst.ClassDef) and _binding_count(module, cls_name) == 1 and _binding_count(scope, cls_name) == 0):
            # a class the function defines itself, once, among its own statements (a tutorial's
            # `class MetadataSource:` right above `metadata_src = MetadataSource(20)`)
            own = [c for c in scope.body.body if type(c) is cst.ClassDef and c.name.value == cls_name]
            d = own[0] if len(own) == 1 and _binding_count(scope, cls_name) == 1 else None
        if isinstance(d, cst.ClassDef):
            kind = _class_kind(d, cls_name)  # (None where its methods do not tell; a reason)
    return kind


def _loops_to(node, scope) -> set:
    """ids of the loops (``for``, ``while``, comprehensions) between ``scope`` and ``node``."""
    loops = (cst.For, cst.While, cst.CompFor)
    stack = [(scope, frozenset())]
    while stack:
        cur, held = stack.pop()
        if cur is node:
            return set(held)
        if isinstance(cur, loops):
            held = held | {id(cur)}
        stack.extend((child, held) for child in cst_walk.children(cur))
    return set()


def _factory_kind(call: cst.Call, scopes: tuple, module):
    """The kind of what ``call`` returns, where it calls a function of the file that returns one
    function it defines (``def source(): ... yield ...`` then ``return source``); None where it
    is not that form.

    The function made there is seen by nothing else: the factory only defines and returns it, so
    what it closes over is the factory's own, and the pipeline that gets it alone uses it."""
    if not isinstance(call.func, cst.Name) or any(_binds(s, call.func.value) for s in scopes):
        return None
    fname = call.func.value
    factory = _top_def(module, fname)
    if (
        not isinstance(factory, cst.FunctionDef) or not _transparent(factory.decorators, module)
        or factory.asynchronous is not None
        or _has_yield(factory) or _binding_count(module, fname) != 1
    ):
        return None
    body = factory.body.body
    last = body[-1] if body else None
    # Every way out of the factory but an exception is a `return` of the function it defines.
    if not (isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 and isinstance(last.body[0], cst.Return)):
        return None
    returns = [
        n for part in cst_walk.children(factory)
        for n in cst_walk.walk(part, not_into=(cst.FunctionDef, cst.ClassDef, cst.Lambda))
        if type(n) is cst.Return
    ]
    made = {n.value.value if isinstance(n.value, cst.Name) else None for n in returns}
    if len(made) != 1 or None in made:
        return None
    made_name = made.pop()
    defs = [s for s in body if isinstance(s, cst.FunctionDef) and s.name.value == made_name]
    if len(defs) != 1 or _binding_count(factory, made_name) != 1 or made_name in _param_names(factory):
        return None
    if sum(1 for n in cst_walk.walk(factory) if type(n) is cst.Name and n.value == made_name) != 1 + len(returns):
        return None  # the factory keeps or passes the function elsewhere too
    d = defs[0]
    if not _transparent(d.decorators, module) or d.asynchronous is not None:
        return None
    kind = _def_kind(d, made_name)
    return kind if isinstance(kind, tuple) else None


#: decorators that return the very function they are given: DALI's pickle_by_value only marks a
#: function for parallel=True's workers to pickle by value
_TRANSPARENT = frozenset({"nvidia.dali.pickling.pickle_by_value"})


def _transparent(decorators, module) -> bool:
    """Are ``decorators`` all ones that leave the function as it is (none at all included)?"""
    if not decorators:
        return True
    from dali_migrate.dali_imports import collect

    names = cst_walk.remembered(collect, module)
    for dec in decorators:
        q = names.qualify(dec.decorator) if not isinstance(dec.decorator, cst.Call) else None
        head = code(dec.decorator).partition(".")[0]
        if q not in _TRANSPARENT or _binding_count(module, head) != 1:  # (the import binds it once)
            return False
    return True


_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


_calls_cache: dict = {}


def _pipeline_calls(module, func):
    """[(call of ``func``, the scopes it is in, innermost last)], or what else names ``func`` (str)."""
    if module is None:
        return "is not seen with the rest of the file"
    # Asked for again by every rule pass over the pipeline: one walk of the file per pipeline.
    hit = _calls_cache.get((id(module), id(func)))
    if hit is not None and hit[0] is module and hit[1] is func:
        return hit[2]
    if len(_calls_cache) > 64:
        _calls_cache.clear()
    found = _walk_calls(module, func)
    _calls_cache[(id(module), id(func))] = (module, func, found)  # the nodes are kept: their ids stay theirs
    return found


def _walk_calls(module, func):
    from dali_migrate import parents as parents_index

    name = func.name.value
    found = []
    # The file's index (the conversion's own, kept by module) gives the names spelled so in the
    # order of a walk: each pipeline asked for no longer walks the whole file (issue 6).
    parents = parents_index.build(module)
    for node in parents.names(name):
        parent = parents.of(node)
        if node is func.name or (isinstance(parent, cst.Attribute) and parent.attr is node) or (
            isinstance(parent, cst.Arg) and parent.keyword is node
        ):
            pass
        elif isinstance(parent, cst.Call) and parent.func is node:
            found.append((parent, _scopes_of(node, parents)))
        else:
            passed = _passed_calls(module, node)
            if passed is None:
                return f"is used here other than by calling it (`{one_line(parent) if parent is not None else name}`)"
            if isinstance(passed, str):
                return passed
            found.extend(passed)
    return found


def _scopes_of(node, parents) -> tuple:
    """The scopes around ``node``, outermost first."""
    out = []
    cur = parents.of(node)
    while cur is not None:
        # (by exact type: isinstance on libcst's classes is slow; none of the scope types has subclasses)
        if type(cur) in _SCOPE_TYPES:
            out.append(cur)
        cur = parents.of(cur)
    return tuple(reversed(out))


_SCOPE_TYPES = frozenset(_SCOPES)


def _passed_calls(module, ref):
    """``benchmark(P, ...)``, where a parameter of benchmark() gets the pipeline function and is
    only called to make pipelines (dali_migrate/pipe_params.py): [(each call of that parameter,
    its scopes)], or why it cannot be followed (str); None when ``ref`` is not such an argument."""
    from dali_migrate import parents as parents_index
    from dali_migrate import pipe_params

    parents = parents_index.build(module)
    if parents.of(ref) is None:
        return None  # not a node of this module's tree
    passed = pipe_params.param_alias(ref, parents)
    if passed is None:
        return None
    if isinstance(passed, tuple):
        reason = passed[1].removesuffix(": convert by hand").removesuffix(", convert by hand")
        return f"is passed to a function of this file ({reason})"
    found = []
    for read in passed.refs:
        call = parents.of(read)
        if not (isinstance(call, cst.Call) and call.func is read):
            continue  # `pipeline.__name__`
        scopes, cur = [], parents.of(call)
        while cur is not None:
            if type(cur) in _SCOPE_TYPES:
                scopes.append(cur)
            cur = parents.of(cur)
        found.append((call, tuple(reversed(scopes))))
    return found


def _argument_for(call: cst.Call, params, name: str):
    """The expression ``call`` gives parameter ``name`` (None: none), or why it cannot be told."""
    if any(a.star for a in call.args):
        return "is called with *args/**kwargs"
    positional = [*params.posonly_params, *params.params]
    given = [a for a in call.args if a.keyword is None]
    for i, a in enumerate(given):
        if i < len(positional) and positional[i].name.value == name:
            return a.value
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return a.value
    return None


def _bound_names(node) -> set:
    """Names bound anywhere under ``node``: assignment, loop and with targets, imports, definitions."""
    from dali_migrate.pipeline_analysis import _assigned_names

    found = set(_assigned_names(node))
    for n in cst_walk.walk(node):
        if isinstance(n, (cst.FunctionDef, cst.ClassDef)) and n is not node:
            found.add(n.name.value)
        elif isinstance(n, cst.ImportAlias):
            found.add(n.asname.name.value if n.asname is not None and isinstance(n.asname.name, cst.Name)
                      else code(n.name).split(".")[0])
        elif isinstance(n, cst.CompFor):
            found |= cst_walk.names(n.target)
        elif isinstance(n, (cst.Global, cst.Nonlocal)):
            found |= {g.name.value for g in n.names}
    return found


def _binds(scope, name: str) -> bool:
    """Does ``scope`` (a function, lambda, class or comprehension) make ``name`` a name of its own?"""
    if isinstance(scope, (cst.FunctionDef, cst.Lambda)):
        p = scope.params
        every = [*p.posonly_params, *p.params, *p.kwonly_params]
        every += [q for q in (p.star_arg, p.star_kwarg) if isinstance(q, cst.Param)]
        if any(q.name.value == name for q in every):
            return True
    body = scope.body if isinstance(scope, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) else scope
    return name in _bound_names(body)


@dataclasses.dataclass
class _Source:
    call: cst.Call  # as written
    kind: str  # callable / iterable / generator_function
    nargs: Optional[int]
    batch: bool
    batch_info: bool
    parallel: bool
    cycle: Optional[str]  # None, "quiet" or "raise"
    outputs: Optional[int]  # num_outputs, None for a single output
    #: why the source cannot be drawn one batch per next(): other code sees the object (None: it
    #: can). An iterator that drives the converted pipeline as DALI's does (PrefetchedPipeline)
    #: draws when the pipeline drew, so there it is converted.
    shared: Optional[str] = None


def _string_literal(expr) -> Optional[str]:
    return expr.evaluated_value if isinstance(expr, cst.SimpleString) else None


@dataclasses.dataclass
class _Fed:
    """An external source fed from outside, one batch per run (``dali_migrate/fed_inputs.py``)."""

    call: cst.Call
    literal: Optional[str]  # its name= as a string literal
    param: Optional[str]  # or the pipeline function's parameter that gives it
    copy: bool  # no_copy is not True: DALI copies what is fed


def _plan_fed(call, ctx):
    """A _Fed for an external source without ``source=``, or why it cannot be converted."""
    info = getattr(ctx, "pipeline", None)
    if _arg(call, "num_outputs") is not None:
        return "fn.external_source(num_outputs=...) without source= (DALI rejects that)"
    for key in ("cycle", "batch", "batch_info", "parallel"):
        if kwarg(call, key) is not None:
            return f"fn.external_source({key}=...) without source=: convert by hand"
    no_copy = _bool_literal(call, "no_copy", False)
    if no_copy is None:
        return "fn.external_source(no_copy=...) not written as True/False: cannot tell whether the fed data is copied, convert by hand"
    name = kwarg(call, "name")
    if name is None:
        return (
            "fn.external_source without source= and without name= is fed through its node (pipe.feed_input(node, data)), "
            "which dali-migrate does not follow: give it a name= and feed that, or convert by hand"
        )
    literal = _string_literal(name.value)
    if literal is not None:
        return _Fed(call, literal, None, not no_copy)
    if isinstance(name.value, cst.Name) and info is not None:
        params = info.func.params
        every = [*params.posonly_params, *params.params, *params.kwonly_params]
        from dali_migrate.pipeline_analysis import _assigned_names

        if any(p.name.value == name.value.value for p in every) and not any(
            name.value.value in _assigned_names(stmt) for stmt in info.statements
        ):
            return _Fed(call, None, name.value.value, not no_copy)
    return (
        f"fn.external_source(name={code(name.value)}): a name that is neither a string literal nor a parameter of the "
        "pipeline cannot be matched with the data fed to run(): convert by hand"
    )


def plan_fed_only(call, info) -> Optional[_Fed]:
    """The _Fed of an external source written without ``source=`` (None: sourced, or not convertible)."""
    if _arg(call, "source") is not None or kwarg(call, SYNTHETIC_FEED) is not None:
        return None
    planned = _plan_fed(call, dataclasses.make_dataclass("_Ctx", ["pipeline"])(info))
    return planned if isinstance(planned, _Fed) else None


def _unchanged_param(expr, ctx) -> bool:
    """Is ``expr`` a parameter of the pipeline function that its body never assigns? The converted
    generator takes the same parameter, so ``as_batch(device=<it>)`` gets what the pipeline got:
    "cpu" and "gpu" mean the same to both, other values DALI rejects when the pipeline is made."""
    info = getattr(ctx, "pipeline", None)
    if not isinstance(expr, cst.Name) or info is None:
        return False
    params = info.func.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    from dali_migrate.pipeline_analysis import _assigned_names

    return any(p.name.value == expr.value for p in every) and not any(
        expr.value in _assigned_names(stmt) for stmt in info.statements
    )


def _plan(call, ctx):
    """A _Source, FED (iter_setup feeds it), or why it cannot be converted (str)."""
    if any(a.star for a in call.args):
        return "fn.external_source with *args/**kwargs: cannot see its arguments, convert by hand"
    if len([a for a in call.args if a.keyword is None]) > len(_POSITIONAL):
        return "fn.external_source with more positional arguments than it takes (source, num_outputs)"
    known = set(_KEEP) | set(_DROP)
    for a in call.args:
        if a.keyword is not None and a.keyword.value not in known:
            return f"fn.external_source({a.keyword.value}=...) is not converted: convert by hand"
    device = kwarg(call, "device")
    if device is not None and not isinstance(device.value, cst.SimpleString) and not _unchanged_param(device.value, ctx):
        return "fn.external_source(device=...) neither a string literal nor a parameter of the pipeline function: convert by hand"
    if kwarg(call, SYNTHETIC_FEED) is not None:
        return FED
    source = _arg(call, "source")
    if source is None:
        return _plan_fed(call, ctx)
    cycle = None
    arg = kwarg(call, "cycle")
    if arg is not None:
        literal = arg.value.value if isinstance(arg.value, cst.Name) else _string_literal(arg.value)
        if literal not in _CYCLES:
            return "fn.external_source(cycle=...) not written as True/False/None/\"quiet\"/\"raise\"/\"no\": convert by hand"
        cycle = _CYCLES[literal]
    outputs = None
    arg = _arg(call, "num_outputs")
    if arg is not None:
        if not (isinstance(arg.value, cst.Integer) and arg.value.evaluated_value >= 1):
            return "fn.external_source(num_outputs=...) not written as a number: convert by hand"
        outputs = arg.value.evaluated_value
        if kwarg(call, "name") is not None:
            return "fn.external_source with both num_outputs= and name= (DALI rejects that)"
    parallel = _bool_literal(call, "parallel", False)
    batch = _bool_literal(call, "batch", not parallel if parallel is not None else None)
    batch_info = _bool_literal(call, "batch_info", False)
    if batch is None or batch_info is None or parallel is None:
        return "fn.external_source with batch= / batch_info= / parallel= not written as True/False: convert by hand"
    for key in ("layout", "dtype"):
        spread = _per_output(call, key, outputs)
        if isinstance(spread, str):
            return spread
    info = getattr(ctx, "pipeline", None)
    kind = source_kind(source.value, getattr(ctx, "module", None), info.func if info is not None else None)
    if isinstance(kind, str):
        return f"fn.external_source: {kind}"
    if kind[0] == "callable" and kind[1] > 1:
        return "fn.external_source: the source takes more than one argument"
    if kind[0] != "callable" and not batch:
        return "fn.external_source(batch=False) needs a callable source"
    if kind[0] == "callable" and cycle is not None:
        return "fn.external_source(cycle=...) with a callable source (DALI rejects that)"
    return _Source(call, kind[0], kind[1], batch, batch_info, parallel, cycle, outputs, kind[2] if len(kind) > 2 else None)


def _per_output(call, key: str, outputs: Optional[int]):
    """[value for each output] of layout= / dtype= (None: not set for it), or a reason."""
    arg = kwarg(call, key)
    if outputs is None:
        return [arg.value if arg is not None else None]
    if arg is None:
        return [None] * outputs
    value = arg.value
    if isinstance(value, (cst.List, cst.Tuple)):
        items = [e.value for e in value.elements]
        if any(isinstance(e, cst.StarredElement) for e in value.elements):
            return f"fn.external_source({key}=...) with a starred list: convert by hand"
        # DALI: outputs past the list's end get no layout ("") / no type.
        return [items[i] if i < len(items) else None for i in range(outputs)]
    if key == "layout" and isinstance(value, cst.SimpleString) or key == "dtype" and isinstance(value, cst.Attribute):
        return [value] * outputs
    return f"fn.external_source({key}=...) with num_outputs=: write it as a literal (a list, or one value for all)"


def _statement_of(call, info):
    i = _statement_index(info).get(id(call))
    return (i, info.statements[i]) if i is not None else (None, None)


def _statement_index(info) -> dict:
    """id(node) -> the index of the first of the pipeline's statements that holds it.

    Asked for each external source and each operator that needs the batch size, from the blocker
    and again from the rewrite: one walk of the statements, kept on the pipeline for as long as its
    statements are these very nodes (the conditionals rule may replace them before the rewrite)."""
    statements = info.statements
    kept = info.__dict__.get("_statement_index")
    if kept is not None and len(kept[0]) == len(statements) and all(a is b for a, b in zip(kept[0], statements)):
        return kept[1]
    index: dict = {}
    for i, stmt in enumerate(statements):
        for node in cst_walk.walk(stmt):
            index.setdefault(id(node), i)
    info.__dict__["_statement_index"] = (list(statements), index)
    return index


def _pipeline_plan(ctx):
    """(mode, [(original call, _Source or FED)]) for the pipeline's external sources, or a reason.

    mode "loop": one source drives the loop; "draw": every iteration draws from each."""
    info = getattr(ctx, "pipeline", None)
    if info is None:
        return "fn.external_source: the pipeline cannot be seen as a whole: convert by hand"
    found = []
    for call, op in info.op_calls:
        if op.fn_name != "external_source":
            continue
        planned = _plan(call, ctx)
        if isinstance(planned, str):
            return planned
        found.append((call, planned))
    iter_setup = any(iter_setup_draws(s) is not None for s in info.statements)
    reader = any(op.is_reader for _, op in info.op_calls)
    if any(isinstance(s, _Fed) for _, s in found):
        reason = _check_fed(found, info, reader or iter_setup)
        return reason if reason else ("fed", found)
    sourced = [s for _, s in found if s is not FED]
    # Sources drawn in one iteration in another order than a pipeline's must share nothing.
    seen: dict = {}
    for s in sourced:
        for name in _shared_names(_arg(s.call, "source").value):
            if name in seen:
                return f"fn.external_source: two sources use `{name}`; a pipeline calls them in an order of its own: convert by hand"
            seen[name] = s
    for s in sourced:
        reason = _check_place(s, info)
        if reason:
            return reason
    for call, s in found:
        i, _ = _statement_of(call, info)
        if s is FED and i is not None and not _reaches_outputs(i, info):
            return "iter_setup feeds an ExternalSource whose output no pipeline output uses (DALI fails there: it pruned it)"
    if len(sourced) == 1 and not reader and not iter_setup and sourced[0].cycle is None and len(found) == 1:
        return "loop", found
    return "draw", found


def _check_fed(found, info, drawn) -> Optional[str]:
    """Why a pipeline fed from outside cannot become a function of the fed batches, or None."""
    from dali_migrate.pipeline_analysis import _assigned_names

    if drawn or not all(isinstance(s, _Fed) for _, s in found):
        return (
            "fn.external_source fed from outside beside a reader, a source= or an iter_setup(): the pipeline both "
            "draws data and takes it from each run, convert by hand"
        )
    keys = [s.literal if s.literal is not None else "param:" + s.param for _, s in found]
    if len(set(keys)) != len(keys):
        return "two fn.external_source with one name (DALI rejects that)"
    # The statements run per call in a function of their own: a name they assign would there
    # hide the enclosing function's (a parameter, setup code) from the statements before.
    outer = set(info.setup_names)
    for i, stmt in enumerate(info.statements):
        if i not in info.setup:
            both = _assigned_names(stmt) & outer
            if both:
                return f"`{sorted(both)[0]}` is assigned both once (a parameter or setup code) and per run: convert by hand"
    # Operators that take the batch size get the fed batch's: the first fed source's, by name.
    name = _source_batch_name(found, info)
    if name is False:
        return (
            "operators that make a batch of their own (random ones, those without inputs) need the fed batch's size: "
            "write `x = fn.external_source(...)` on a line of its own before them, or convert by hand"
        )
    if name is not None:
        info.__dict__["_fed_batch_size"] = f"{name}.batch_size"
    return None


def _source_batch_name(found, info):
    """The name the first external source's batch is assigned to, where operators that make a
    batch of their own (random ones, those without inputs) need its size: a pipeline runs each
    iteration at the size of the batch its sources give (a source's last batch may be short).
    None where no operator needs it; False where the batch is not so named before them."""
    from dali_migrate.pipeline_analysis import _assigned_names

    first, at = None, None
    for call, s in found:
        i, stmt = _statement_of(call, info)
        if i is not None and (at is None or i < at):
            at, first = i, stmt
    size_users = _batch_size_users(info)
    if not size_users:
        return None
    ok = (
        first is not None
        and isinstance(first, cst.SimpleStatementLine)
        and len(first.body) == 1
        and isinstance(first.body[0], cst.Assign)
        and isinstance(first.body[0].value, cst.Call)
        and len(first.body[0].targets) == 1
        and isinstance(first.body[0].targets[0].target, cst.Name)
    )
    name = first.body[0].targets[0].target.value if ok else None
    if ok and any(name in _assigned_names(stmt) for stmt in info.statements[at + 1 :]):
        ok = False
    if ok:
        for c in size_users:
            j, _ = _statement_of(c, info)
            if j is not None and j <= at:
                ok = False
    return name if ok else False


def _shared_names(expr) -> set:
    """Names a source expression holds on to (not those it only calls, like a class it instantiates)."""
    nodes = list(cst_walk.walk(expr))  # libcst's order, as m.findall's: the set is built in the same order
    called = {id(c.func) for c in nodes if type(c) is cst.Call}
    return {n.value for n in nodes if type(n) is cst.Name and id(n) not in called}


def _check_place(s: _Source, info) -> Optional[str]:
    i, stmt = _statement_of(s.call, info)
    if i is None:
        if info.returned is None or not any(n is s.call for n in cst_walk.walk(info.returned)):
            return "fn.external_source is not a statement of the pipeline function: convert by hand"
        i = len(info.statements)  # in the `return` line: nothing comes after it
    if s.outputs is not None:
        ok = (
            isinstance(stmt, cst.SimpleStatementLine)
            and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Assign)
            and stmt.body[0].value is s.call
            and len(stmt.body[0].targets) == 1
            and isinstance(stmt.body[0].targets[0].target, (cst.Tuple, cst.List))
            and len(stmt.body[0].targets[0].target.elements) == s.outputs
            and not any(isinstance(e, cst.StarredElement) for e in stmt.body[0].targets[0].target.elements)
        )
        if not ok:
            return f"fn.external_source(num_outputs={s.outputs}) is converted only where its outputs are unpacked on the spot (`a, b = fn.external_source(...)`): unpack them there, or convert by hand"
    # The source is made once, before the loop: a name it uses must not change after this call.
    from dali_migrate.pipeline_analysis import _assigned_names

    used = cst_walk.names(_arg(s.call, "source").value)
    for later in info.statements[i + 1 :]:
        if used & _assigned_names(later):
            return "fn.external_source: a name its source uses is assigned again after it: convert by hand"
    if not _reaches_outputs(i, info) and not _bool_literal(s.call, "preserve", False):
        return (
            "fn.external_source whose output no pipeline output uses: a pipeline prunes it and never calls its "
            "source, the converted loop would; remove it, or convert by hand"
        )
    return None


def _reaches_outputs(i: int, info) -> bool:
    """Does what statement ``i`` binds reach the pipeline's outputs (``i`` past the end: the return)?

    Liveness over the statements after it. A compound statement may or may not run its
    assignments, so they do not end a name's liveness."""
    from dali_migrate.pipeline_analysis import _assigned_names

    if i >= len(info.statements):
        return True
    live = _reads(info.returned)
    for stmt in reversed(info.statements[i + 1 :]):
        assigned = _assigned_names(stmt)
        if assigned & live:
            if isinstance(stmt, cst.SimpleStatementLine):
                live -= assigned
            live |= _reads(stmt)
    return bool(_assigned_names(info.statements[i]) & live)


def _reads(node) -> set:
    """Variables ``node`` reads (not those it only assigns): the names of ``node``, less assignment,
    loop and ``as`` targets, walrus targets, attribute names and keywords (the annotation of an
    annotated assignment is not counted). A walk of its own, not a libcst visitor: asked for every
    statement after each external source."""
    found: set = set()
    stack = [node]

    def target(t):
        if isinstance(t, (cst.Tuple, cst.List)):
            for e in t.elements:
                target(e.value)
        elif isinstance(t, cst.StarredElement):
            target(t.value)
        elif not isinstance(t, cst.Name):
            stack.append(t)  # x.attr = ..., x[i] = ...: x is read

    while stack:
        n = stack.pop()
        tp = type(n)
        if tp is cst.Name:
            found.add(n.value)
        elif tp is cst.AssignTarget:
            target(n.target)
        elif tp is cst.AnnAssign:
            target(n.target)
            if n.value is not None:
                stack.append(n.value)
        elif tp is cst.For:
            target(n.target)
            stack.extend((n.iter, n.body) if n.orelse is None else (n.iter, n.body, n.orelse))
        elif tp is cst.AsName:
            pass
        elif tp is cst.NamedExpr or tp is cst.Attribute or tp is cst.Arg:
            stack.append(n.value)
        else:
            stack.extend(cst_walk.children(n))
    return found


#: call-site rules that make a framework iterator over the pipeline (rules/torch_iterator.py),
#: and those that may come with it: the base of a class derived from it, ``pipe.build()``
_ITERATORS = ("torch-iterator", "paddle-iterator", "jax-iterator")
_WITH_ITERATORS = frozenset({*(f"{i}-base" for i in _ITERATORS), "pipe-build", "pipe-device-id"})


def iterator_restart(info, plan):
    """How the engine converts a pipeline with external sources, given its call-site ``plan``:
    True where framework iterators of the file drive it (the Restart form: they reset it as
    DALI's do), None where it stays a plain generator, or why it cannot be converted (a str)."""
    sources = info.__dict__.get("_es_sources")
    if sources is None:
        return None
    used = {rule.id for rule, _ in plan.rewrites.values()}
    if not used & set(_ITERATORS):
        shared = next((s.shared for s in sources if s.shared), None)
        return f"fn.external_source: {shared}" if shared else None
    other = used - set(_ITERATORS) - _WITH_ITERATORS
    reason = restart_blocker(info)
    if reason:
        return f"fn.external_source: {reason}"
    if other:
        return (
            "a pipeline with fn.external_source that the file both gives to a framework iterator and uses otherwise "
            f"({', '.join(sorted(other))}): its converted generator has one form for either; convert by hand"
        )
    return True


def restart_blocker(info) -> Optional[str]:
    """Why a framework iterator cannot drive this converted pipeline with external sources as
    DALI's iterators do (None: it can)."""
    restart = info.__dict__.get("_es_restart")  # (the engine keeps the Restart form built, or the reason)
    if isinstance(restart, str):
        return restart
    return None if isinstance(restart, cst.FunctionDef) else "the pipeline's restartable form was not made"


def reset_blocker(info, module) -> Optional[str]:
    """Why ``pipe.reset()`` on this pipeline may change what it gives next (None: it cannot).

    DALI 2.4's ``Pipeline.reset()`` acts only after a source raised StopIteration (``_last_iter``:
    neither a reader nor anything else sets it). Then it rewinds callables (``reset_indices``:
    iteration 0, the next epoch index) and parallel sources' worker contexts, and ``run()``
    draws from the sources again. A generator function without ``cycle=`` it called once, when
    the pipeline was defined: reset() leaves that generator as it is, and a spent generator gives
    nothing ever again; so ``run()`` goes on raising StopIteration, as ``next()`` does on the
    converted generator that ended there. A pipeline whose every source is such, or that has none,
    gives the same batches with or without the call."""
    ctx = _SourceCtx(info, module)
    for call, op in info.op_calls:
        if op.fn_name != "external_source":
            continue
        s = _plan(call, ctx)
        if isinstance(s, str):
            return s
        if not isinstance(s, _Source):
            return "the pipeline is fed by iter_setup() or feed_input, which reset() lets feed it again after StopIteration"
        if s.kind != "generator_function":
            what = "a callable, which reset() calls again" if s.kind == "callable" else "an iterable, whose iterator may go on"
            return (f"its source `{one_line(_arg(call, 'source').value)}` is {what} after StopIteration, where the "
                    "converted generator has ended")
        if s.cycle is not None or s.parallel:
            return "its source is cycled or parallel, which reset() starts again after StopIteration, where the converted generator has ended"
    if any(iter_setup_draws(stmt) is not None for stmt in info.statements):
        return "its iter_setup() draws from an iterator that reset() lets go on after StopIteration"
    return None


@dataclasses.dataclass
class _SourceCtx:
    """What _plan reads of a conversion's context, for a pipeline seen from its call sites."""

    pipeline: object
    module: object


def _blocker(call, op, ctx):
    if op.fn_name != "external_source":
        return None
    planned = _plan(call, ctx)
    if isinstance(planned, str):
        return planned
    whole = _pipeline_plan(ctx)
    if isinstance(whole, str):
        return whole
    size = ctx.pipeline.__dict__.get("_fed_batch_size")
    if whole[0] == "fed" and size is not None:
        # Before any rewrite: a pipeline runs at the fed batch's size, not at batch_size.
        ctx.batch_size = size
    elif whole[0] in ("loop", "draw"):
        size = _drawn_batch_size(ctx, whole[1]) or _fed_by_iter_setup_size(ctx, whole[1])
        if size is not None:
            ctx.batch_size = size
    return None


def _fed_by_iter_setup_size(ctx, found) -> Optional[str]:
    """``len(<the batch iter_setup fed>)`` where operators that make a batch of their own need the
    iteration's batch size and no reader sets it: a pipeline runs each iteration at the size of
    what feed_input got (an iterator's last batch may be short), not at batch_size."""
    info = ctx.pipeline
    if any(op.is_reader for _, op in info.op_calls) or not _batch_size_users(info):
        return None
    for call, s in found:
        feed = kwarg(call, SYNTHETIC_FEED)
        if s is FED and feed is not None and isinstance(feed.value, cst.Name):
            return f"len({feed.value.value})"
    return None


def _batch_size_users(info) -> list:
    """The pipeline's operator calls that make a batch of their own (random ones, those without
    inputs, constants): they are given the iteration's batch size."""
    from dali_migrate.rules.batch_size import needs_batch_size

    return [
        c for c, op in info.op_calls
        if op.fn_name != "external_source" and (needs_batch_size(c, op) or op.fn_name == "constant")
    ]


def _sized_source(ctx, found):
    """The source whose drawn batch gives an iteration's batch size, where operators that make a
    batch of their own need it: the first one drawn (as _prepare orders them), if it gives whole
    batches (a per-sample callable always gives batch_size samples) and no reader or iter_setup
    sets the size; else None."""
    info = ctx.pipeline
    if any(op.is_reader for _, op in info.op_calls) or any(s is FED for _, s in found):
        return None
    sourced = sorted((s for _, s in found if isinstance(s, _Source)), key=lambda s: not s.parallel)
    if not sourced or not sourced[0].batch or not _batch_size_users(info):
        return None
    return sourced[0]


def _drawn_batch_size(ctx, found):
    """The name that holds the batch size of the iteration (``len`` of the batch the first source
    gave), for operators that make a batch of their own: a pipeline runs each iteration at the
    size of its sources' batch, and a source's last batch may be short (random operators given
    batch_size would draw for samples that are not there). None where it is batch_size."""
    info = ctx.pipeline
    if _sized_source(ctx, found) is None:
        return None
    name = info.__dict__.get("_es_batch_size")
    if name is None:
        name = info.__dict__["_es_batch_size"] = fresh_name("source_batch_size", ctx.taken)
    return name


def _size_line(ctx, s, data):
    """``source_batch_size = len(<data>)`` for the source ``s`` (:func:`_drawn_batch_size`), or []."""
    name = ctx.pipeline.__dict__.get("_es_batch_size")
    if name is None or not isinstance(s, _Source) or s is not ctx.pipeline.__dict__.get("_es_sized"):
        return []
    ctx.taken.add(name)
    first = f"{data}[0]" if s.outputs is not None else data
    return [_stmt(f"{name} = len({first})\n")]


def _iterator(s: _Source, src: str, ctx, epoch: str = "0") -> str:
    """An expression that gives the source's batches, one per next(), as the pipeline draws them
    (``epoch``: the epoch index a callable gets in its BatchInfo / SampleInfo)."""
    if s.kind == "iterable":
        return f"iter({src})"
    if s.kind == "generator_function":
        return f"{src}()"
    count = ctx.need_import("itertools")
    if not s.batch:
        types = ctx.types_module()
        arg = f"{types}.SampleInfo(i * {ctx.batch_size} + j, j, i, {epoch})" if s.nargs else ""
        return f"map(lambda i: [{src}({arg}) for j in range({ctx.batch_size})], {count}.count())"
    if s.nargs == 0:
        return f"map(lambda i: {src}(), {count}.count())"
    if s.batch_info:
        return f"map(lambda i: {src}({ctx.types_module()}.BatchInfo(i, {epoch})), {count}.count())"
    return f"map({src}, {count}.count())"


def _uses_epoch(s: _Source) -> bool:
    """Does DALI pass the callable the epoch index (a BatchInfo, a SampleInfo)?"""
    return s.kind == "callable" and bool(s.nargs) and (s.batch_info or not s.batch)


@dataclasses.dataclass
class Restart:
    """The converted generator's form for an iterator that resets the pipeline (``pipeline_def.build``
    with ``restart=True``, used where ``torch_iterator`` emits ``PrefetchedPipeline``): where the
    pipeline raised StopIteration it yields None, and the next ``next()`` starts the sources' next
    epoch as ``pipe.reset()`` did: a callable is called from iteration 0 again with the next epoch
    index (DALI's ``reset_indices``, ``epoch_idx + 1``); an iterable or a generator goes on with
    the iterator DALI made once (``iter()`` is not called again: a spent one gives nothing)."""

    setup: list  # before the loop, in place of the plain form's (ctx.loop_setup)
    draws: list  # at the start of each iteration, in place of ctx.draws
    again: list  # after the `yield None`: what pipe.reset() resets


#: the comment of the `yield None` of a restartable converted pipeline
END_COMMENT = "# the source's end: pipe.run() raised StopIteration here; next() starts it again, as after pipe.reset()"


def end_block(again: list, indent: str = "") -> str:
    """The lines that end an epoch in a restartable converted pipeline: ``yield None``, what
    pipe.reset() resets, ``continue``."""
    lines = [f"yield None  {END_COMMENT}", *(code(a).strip() for a in again), "continue"]
    return "".join(f"{indent}{line}\n" for line in lines)


def _restart(ctx, sourced: list, names: dict):
    """The Restart form of the pipeline's sources, or why there is none (a str).

    ``names``: id(call) -> (source name, data name) the plain form chose (the rewritten
    statements read the data names)."""
    info = ctx.pipeline
    if any(op.is_reader for _, op in info.op_calls):
        return (
            "fn.external_source beside a reader: where the source ends, DALI's pipeline does not run the reader, "
            "the converted loop has read its batch"
        )
    if any(s.parallel for _, s in sourced):
        return "fn.external_source(parallel=True): DALI's worker pool keeps batches it prefetched across reset()"
    needs_epoch = any(_uses_epoch(s) for _, s in sourced)
    epoch = fresh_name("epoch", ctx.taken) if needs_epoch else "0"
    end = names.get("end") or fresh_name("end", ctx.taken)
    setup = [_stmt(f"{epoch} = 0\n")] if needs_epoch else []
    if sourced:
        setup.append(_stmt(f"{end} = object()\n"))
    draws, again, tested = [], [_stmt(f"{epoch} += 1\n")] if needs_epoch else [], []
    for call, s in sourced:
        src, data, it = names[id(call)]
        setup.append(_stmt(f"{src} = {code(_arg(call, 'source').value)}\n"))
        setup.append(_stmt(f"{it} = {_iterator(s, src, ctx, epoch)}\n"))
        draws.append(_stmt(f"{data} = next({it}, {end})\n"))
        if s.cycle is not None:
            rewind = f"iter({src})" if s.kind == "iterable" else f"{src}()"
            then = f"\n    {data} = next({it}, {end})" if s.cycle == "quiet" else ""
            draws.append(_stmt(f"if {data} is {end}:\n    {it} = {rewind}{then}\n"))
        if s.kind == "callable":
            again.append(_stmt(f"{it} = {_iterator(s, src, ctx, epoch)}\n"))
        tested.append(data)
    if tested:
        test = " or ".join(f"{n} is {end}" for n in tested)
        draws.append(_stmt(f"if {test}:\n" + end_block(again, "    ")))
    for call, s in sourced:
        draws += _size_line(ctx, s, names[id(call)][1])
    return Restart(setup, draws, again)


def _stmt(text: str) -> cst.BaseStatement:
    return templates.statement(text)  # (the same lines come for every pipeline)


def _prepare(ctx) -> dict:
    """Plan the pipeline's sources once: statements before the loop and in it; {id(call): data name}.
    Also the restartable form (``ctx.restart``: a Restart, or why there is none)."""
    state = ctx.rule_state.get(RULE.id)
    if state is not None:
        return state
    mode, found = _pipeline_plan(ctx)
    state = ctx.rule_state[RULE.id] = {}
    ctx.pipeline.__dict__["_es_sources"] = [s for _, s in found if isinstance(s, _Source)]
    if mode == "fed":
        ctx.fed_inputs = fresh_name("pipeline_inputs", ctx.taken)
        ctx.restart = "fed from outside (pipe.run(name=data) / feed_input), which DALI's iterators do not feed"
        return state
    sourced = [(call, s) for call, s in found if s is not FED]
    ctx.sources_made = [*ctx.sources_made, *(_arg(call, "source").value for call, _ in sourced)]
    ctx.pipeline.__dict__["_es_sized"] = _sized_source(ctx, found) if ctx.pipeline.__dict__.get("_es_batch_size") else None
    names: dict = {}
    if mode == "loop":
        call, s = sourced[0]
        src = fresh_name("source", ctx.taken)
        data = fresh_name("source_data", ctx.taken)
        ctx.loop_setup = [*ctx.loop_setup, _stmt(f"{src} = {code(_arg(call, 'source').value)}\n")]
        loop = src if s.kind == "iterable" else _iterator(s, src, ctx)
        ctx.source_loop = (templates.expression(loop), data)
        ctx.draws = [*ctx.draws, *_size_line(ctx, s, data)]
        state[id(call)] = data
        names[id(call)] = (src, data, fresh_name("source_iter", ctx.taken))
        ctx.restart = _restart(ctx, sourced, names)
        return state
    if not sourced:
        ctx.restart = _restart(ctx, sourced, names)
        return state
    # A pipeline runs parallel sources' callbacks first, then the others.
    sourced.sort(key=lambda cs: not cs[1].parallel)
    end = fresh_name("end", ctx.taken)
    names["end"] = end
    setup = [_stmt(f"{end} = object()\n")]
    draws, tested = [], []
    for call, s in sourced:
        src = fresh_name("source", ctx.taken)
        it = fresh_name("source_iter", ctx.taken)
        data = fresh_name("source_data", ctx.taken)
        names[id(call)] = (src, data, it)
        setup.append(_stmt(f"{src} = {code(_arg(call, 'source').value)}\n"))
        setup.append(_stmt(f"{it} = {_iterator(s, src, ctx)}\n"))
        draws.append(_stmt(f"{data} = next({it}, {end})\n"))
        if s.cycle is not None:
            # DALI's _CycleIter / _CycleGenFunc: the source is made anew where it ends
            again = f"iter({src})" if s.kind == "iterable" else f"{src}()"
            if s.cycle == "quiet":
                then = f"\n    {data} = next({it}, {end})"
            else:
                then = "\n    return" if len(sourced) == 1 else ""
            draws.append(_stmt(f"if {data} is {end}:\n    {it} = {again}{then}\n"))
        tested.append(data)
        state[id(call)] = data
    if not (len(sourced) == 1 and sourced[0][1].cycle == "raise"):
        test = " or ".join(f"{n} is {end}" for n in tested)
        draws.append(_stmt(f"if {test}:\n    return\n"))
    for call, s in sourced:
        draws += _size_line(ctx, s, state[id(call)])
    ctx.loop_setup = [*ctx.loop_setup, *setup]
    ctx.draws = [*ctx.draws, *draws]
    ctx.restart = _restart(ctx, sourced, names)
    return state


def _as_batch(data: cst.BaseExpression, call, ctx, output=None, func="as_batch") -> cst.Call:
    """``ndd.as_batch(data, ...)`` with the call's layout, dtype and device (``output``: this
    output's (layout, dtype) when the source has several); with a dtype, the checking helper
    (``external_source_batch(data, dtype, ...)``) instead."""
    args = [cst.Arg(data)]
    for key in (k for k in _KEEP if k != "dtype"):  # (dtype= is the checking helper's, below)
        if output is not None and key == "layout":
            if output[0] is not None:
                args.append(cst.Arg(keyword=cst.Name(key), value=output[0], equal=_EQ))
            continue
        a = kwarg(call, key)
        if a is not None:
            args.append(a.with_changes(comma=cst.MaybeSentinel.DEFAULT))
    written = kwarg(call, "dtype")
    dtype = output[1] if output is not None else written.value if written is not None else None
    callee = ctx.ndd_attr(func)
    if dtype is not None:
        callee = cst.Name(_dtype_helper(ctx))
        args.insert(1, cst.Arg(dtype))
        if func == "batch":
            args.append(cst.Arg(keyword=cst.Name("copy"), value=cst.Name("True"), equal=_EQ))
    args = [a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for a in args[:-1]] + args[-1:]
    return cst.Call(func=callee, args=args)


def _dtype_helper(ctx) -> str:
    """The name of the file's ``external_source_batch`` (added to it once, for every pipeline)."""
    name = ctx.rule_state.get(DTYPE_HELPER)
    if name is None:
        name = ctx.rule_state[DTYPE_HELPER] = fresh_name(DTYPE_HELPER, ctx.taken)
        ctx.pipeline.helpers[name] = _DTYPE_HELPER_SOURCE.replace(DTYPE_HELPER, name).replace("ndd.", f"{ctx.ndd}.")
    return name


DTYPE_HELPER = "external_source_batch"
_DTYPE_HELPER_SOURCE = '''\
def external_source_batch(data, dtype, copy=False, **kwargs):
    """fn.external_source(dtype=...) as a pipeline runs it (added by dali-migrate): the source's
    data must already be of that type; ndd.as_batch(dtype=...) would convert it instead."""
    if isinstance(data, (list, tuple)) and not data:
        return (ndd.batch if copy else ndd.as_batch)(data, dtype=dtype, **kwargs)
    batch = (ndd.batch if copy else ndd.as_batch)(data, **kwargs)
    if batch.dtype != ndd.dtype(dtype):
        raise RuntimeError(
            f"ExternalSource expected data of type {ndd.dtype(dtype)} and got: {batch.dtype}"
        )
    return batch
'''


_EQ = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))


def _rewrite(call, op, ctx):
    if op.fn_name != "external_source":
        return call
    written = getattr(ctx, "call_as_written", None) or call
    state = _prepare(ctx)
    feed = kwarg(call, SYNTHETIC_FEED)
    # DALI copies what a source returns and what feed_input gets unless the operator has
    # no_copy=True: a source or iter_setup may refill one buffer for the next batch, or the
    # pipeline's python_function change it in place (ndd.batch copies, as_batch views)
    copied = "as_batch" if _bool_literal(written, "no_copy", False) is True else "batch"
    if feed is not None:
        return _as_batch(feed.value, call, ctx, func=copied)
    s = _plan(written, ctx)
    if isinstance(s, _Fed):
        key = kwarg(written, "name").value  # as written: a string literal or the parameter
        fed = cst.Subscript(cst.Name(ctx.fed_inputs), [cst.SubscriptElement(cst.Index(key))])
        return _as_batch(fed, call, ctx, func="batch" if s.copy else "as_batch")
    data = state[id(written)]
    if s.outputs is None:
        return _as_batch(cst.Name(data), call, ctx, func=copied)
    layouts, dtypes = _per_output(call, "layout", s.outputs), _per_output(call, "dtype", s.outputs)
    items = []
    for k in range(s.outputs):
        part = f"{data}[{k}]" if s.batch else f"[sample[{k}] for sample in {data}]"
        layout = layouts[k]
        if isinstance(layout, cst.SimpleString) and not layout.evaluated_value:
            layout = None
        items.append(cst.Element(_as_batch(templates.expression(part), call, ctx, output=(layout, dtypes[k]), func=copied)))
    return cst.Tuple(items, lpar=[], rpar=[])


RULE = OpCallRule(
    id="external-source",
    summary="fn.external_source: the loop draws every source's batch each iteration (as the pipeline does), ndd.batch(...) copies it",
    order=95,
    applies=lambda op: op.fn_name == "external_source",
    blocker=_blocker,
    rewrite=_rewrite,
)
