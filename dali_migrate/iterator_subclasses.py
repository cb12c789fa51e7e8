"""Classes of the file derived from a DALI framework iterator, as training code writes them to adapt
the batches to a framework (PyTorch Lightning's example):

    class LightningWrapper(DALIClassificationIterator):
        def __init__(self, *kargs, **kvargs):
            super().__init__(*kargs, **kvargs)

        def __next__(self):
            out = super().__next__()
            out = out[0]
            return [out[k] if k != "label" else torch.squeeze(out[k]) for k in self.output_map]

    loader = LightningWrapper(pipe, reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL)

The iterator rules convert such a call as one of the base iterator (the constructor hands its
arguments on unchanged) and give the class the emitted iterator class as its base. That is exact only
where the subclass reaches nothing but what both classes have with the same meaning, which
:func:`problem` checks: the public API of DALI's iterators (``output_map``, ``batch_size``, ``size``,
``reset()``, ``next()``, ``__next__``, ``__iter__``, ``__len__``, which the emitted class calls where
DALI's calls them: ``self.reset()`` and ``next()`` through the instance, the first batch through the
class itself), DALI's counters ``_counter``, ``_size`` and ``_num_gpus`` read (not set: the emitted class keeps them
as DALI's base iterator does), and attributes of its own, public or private, that neither base class
uses (:data:`DALI_PRIVATE`, :func:`emitted_private`).

Its ``__init__`` may take parameters of its own before ``*args`` (timescale-diffusion's
``LightningWrapper(periodic, *kargs, **kvargs)``, called ``LightningWrapper(self.periodic, pipe,
...)``), without defaults and named unlike the iterator's: a call gives them first, by position
(:func:`leading`, :func:`skipped`), and the converted call keeps them there.

A class may also make its pipeline itself, as ColossalAI's loaders do::

    class DaliDataloader(DALIClassificationIterator):
        def __init__(self, tfrec_filenames, ..., batch_size=128, training=True):
            pipe = Pipeline(batch_size=batch_size, ...)
            with pipe:
                ...
            super().__init__(pipe, reader_name="Reader", auto_reset=True, last_batch_policy=...)

        def __iter__(self):
            if self._counter >= self._size or self._size < 0:
                self.reset()
            return self

Then the iterator converted is that ``super().__init__(...)`` (:func:`own_init`), made once, as a
statement of ``__init__``'s own body; the class's calls keep their arguments, and each instance makes
its own converted pipeline.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Optional

import libcst as cst
from dali_migrate import match as m

#: what a subclass may read from its base: the public API both classes share
API = frozenset({"output_map", "batch_size", "size", "reset", "next", "__next__", "__iter__", "__len__"})
#: what a subclass may define besides methods of its own: overrides DALI's own code reaches the same way
OVERRIDES = frozenset({"__init__", "reset", "next", "__next__", "__iter__", "__len__"})
_DATA = frozenset({"output_map", "batch_size", "size"})
#: DALI's private counters, which a subclass may read (not set): the emitted classes keep them as
#: DALI's _DaliBaseIterator does, at every point a subclass can see them (checked against DALI's
#: iterator step by step: tests/test_torch_iterator.py). ColossalAI's loaders read _counter and
#: _size in __iter__; PyTorch Lightning's DALI example computes __len__ from _size and _num_gpus
#: (the number of pipelines, which DALI never changes after __init__).
READ = frozenset({"_counter", "_size", "_num_gpus"})

#: The private attributes (``self._x``) DALI's own framework iterators use: nvidia/dali/plugin/
#: base_iterator.py, pytorch/__init__.py, paddle.py and jax/*.py of DALI 1.53 and 2.4 together.
#: A subclass that sets one of them changes what DALI's code does, which the emitted class would not
#: repeat; one it sets that neither DALI's iterators nor the emitted classes use (PyTorch Lightning's
#: example keeps ``self._fill_last_batch`` for its own __len__) is the subclass's own state.
#: tests/rules/test_iterator_subclasses.py checks the installed DALI's names against this set.
DALI_PRIVATE = frozenset({
    "_advance_and_check_drop_last", "_assert_output_shape_and_type", "_assert_shards_shapes", "_auto_reset",
    "_build_output_with_device_put", "_build_output_with_sharding", "_calculate_shard_sizes", "_check_batch_size",
    "_checkpointed_fields", "_counter", "_counter_per_gpu", "_deserialize_value", "_element_spec",
    "_enable_checkpointing", "_end_iteration", "_ever_consumed", "_ever_scheduled",
    "_extract_from_reader_and_validate", "_first_batch", "_gather_outputs_for_category", "_get_outputs",
    "_initial_checkpoints", "_is_stick_to_shard", "_last_batch_padded", "_last_batch_policy", "_mutex",
    "_next_impl", "_next_with_peek_impl", "_num_gpus", "_output_categories", "_output_tags", "_outputs_types",
    "_peek", "_pipes", "_pmap_compatible", "_pool", "_prepare_first_batch", "_reader_name", "_remove_padded",
    "_report_no_data_in_pipeline", "_restore_state", "_save_state", "_schedule_runs", "_serialize_value",
    "_set_element_spec", "_shard_sizes_per_gpu", "_shard_sizes_per_gpu_initial", "_sharding", "_shards_id",
    "_shards_num", "_size", "_size_no_pad",
})

#: the files whose text holds every emitted iterator class: the torch classes and the (old, new)
#: edits that make the external-source, JAX and Paddle classes from them
_EMITTED = ("emitted_torch_iterator.py", "rules/torch_iterator.py", "rules/jax_iterator.py", "rules/paddle_iterator.py")


@functools.lru_cache(maxsize=1)
def emitted_private() -> frozenset:
    """The private attributes the emitted iterator classes use (every ``self._x`` in their text: more
    than they use, never fewer)."""
    root = Path(__file__).resolve().parent
    return frozenset(n for f in _EMITTED for n in re.findall(r"\bself\.(_\w+)", (root / f).read_text()))


def _own_private(attr: str) -> bool:
    """Is ``attr`` a private attribute neither DALI's iterators nor the emitted classes use?"""
    return (
        attr.startswith("_") and not attr.startswith("__")
        and attr not in DALI_PRIVATE and attr not in emitted_private()
    )


def resolve(func, parents, names) -> Optional[tuple]:
    """(the class, its base's qualified name) when ``func`` (a call's callee) names a class of the
    file whose one base is a class of ``nvidia.dali.plugin``, or is ``super().__init__`` in the
    ``__init__`` of such a class (:func:`own_init`); else None."""
    if names is None or parents is None:
        return None
    if _is_super_init(func):
        cls = _init_class(func, parents)
        classes = [cls] if cls is not None else []
    elif isinstance(func, cst.Name):
        classes = [c for c in parents.find(cst.ClassDef) if c.name.value == func.value]
    else:
        return None
    if len(classes) != 1 or len(classes[0].bases) != 1:
        return None
    q = names.qualify(classes[0].bases[0].value) or ""
    return (classes[0], q) if q.startswith("nvidia.dali.plugin.") else None


def _is_super_init(func) -> bool:
    return m.matches(func, m.Attribute(value=m.Call(func=m.Name("super"), args=[]), attr=m.Name("__init__")))


def _init_class(node, parents) -> Optional[cst.ClassDef]:
    """The class whose ``__init__`` ``node`` is in (directly: not in a function or class inside it)."""
    func = parents.scope(node)
    cls = parents.scope(func) if isinstance(func, cst.FunctionDef) and func.name.value == "__init__" else None
    return cls if isinstance(cls, cst.ClassDef) and parents.of(parents.of(func)) is cls else None


def own_init(call: cst.Call, parents) -> bool:
    """Is ``call`` the class's ``super().__init__(...)``, the iterator made over a pipeline its
    ``__init__`` makes itself (ColossalAI's loaders)? Then that is the call converted, and the
    class's own calls keep their arguments."""
    return _is_super_init(call.func) and _init_class(call, parents) is not None


def problem(cls: cst.ClassDef, call: cst.Call, parents) -> Optional[str]:
    """Why converting ``call`` (of the subclass ``cls``) and the class's base would not be exact, or None."""
    name = cls.name.value
    what = f"class {name} (derived from the DALI iterator)"
    base = cls.bases[0]
    if cls.decorators or cls.keywords or base.keyword is not None or base.star:
        return f"{what} is decorated or has class keywords: convert it and its use by hand"
    for ref in parents.names(name):
        if ref is cls.name:
            continue
        user = parents.of(ref)
        # (other calls: call_sites._check_iterator_classes converts them all, or none)
        if not (isinstance(user, cst.Call) and user.func is ref):
            return f"{what} is used here other than in calls of it (a subclass, a check of its type): convert it and its uses by hand"
    if any(_binds(n, parents) for n in parents.names(name) if n is not cls.name):
        return f"{what}: its name is also bound to something else: convert by hand"
    methods = {}
    for stmt in cls.body.body:
        if isinstance(stmt, cst.FunctionDef):
            if stmt.decorators or stmt.asynchronous is not None or stmt.name.value in methods:
                return f"{what}: method {stmt.name.value}() is decorated, async or defined twice: convert by hand"
            methods[stmt.name.value] = stmt
        elif not (isinstance(stmt, cst.SimpleStatementLine) and all(
            isinstance(s, cst.Pass) or (isinstance(s, cst.Expr) and isinstance(s.value, (cst.SimpleString, cst.ConcatenatedString)))
            for s in stmt.body
        )):
            return f"{what} has class-level statements other than methods: convert it by hand"
    for method in methods:
        if method.startswith("_") and method not in OVERRIDES or method in _DATA:
            return f"{what} defines {method}(), which DALI's iterator and the converted one implement differently: convert by hand"
    assigned = set()
    for func in methods.values():
        me = _self_name(func)
        if me is None:
            return f"{what}: method {func.name.value}() has no `self` parameter: convert by hand"
        for ref in parents.names(me):
            if not parents.contains(func, ref) or ref is _first_param(func).name:
                continue
            attr = parents.of(ref)
            if _builtin_of_self(ref, parents) or (isinstance(attr, cst.Return) and attr.value is ref):
                continue  # (`return self`: __iter__ hands out the object itself)
            if not (isinstance(attr, cst.Attribute) and attr.value is ref):
                return f"{what}: `{me}` is used in {func.name.value}() other than to read or set an attribute: convert by hand"
            if _is_target(attr, parents):
                assigned.add(attr.attr.value)
    for attr in assigned:
        if (attr.startswith("_") and not _own_private(attr)) or attr in API or attr in methods:
            return f"{what} sets self.{attr}, which the converted iterator may use differently: convert by hand"
    own = set(methods) | assigned
    for func in methods.values():
        me = _self_name(func)
        for ref in parents.names(me):
            attr = parents.of(ref)
            if parents.contains(func, ref) and isinstance(attr, cst.Attribute) and attr.value is ref:
                if attr.attr.value not in API and attr.attr.value not in READ and attr.attr.value not in own:
                    return f"{what} uses self.{attr.attr.value}, which the converted iterator does not have: convert by hand"
    for sup in parents.names("super"):
        if not parents.contains(cls, sup):
            continue
        inner = parents.of(sup)
        attr = parents.of(inner)
        if not (isinstance(inner, cst.Call) and inner.func is sup and not inner.args and isinstance(attr, cst.Attribute) and attr.value is inner):
            return f"{what} calls super() with arguments or uses it other than as super().<name>: convert by hand"
        if attr.attr.value not in API and attr.attr.value != "__init__":
            return f"{what} uses super().{attr.attr.value}, which the converted iterator does not have: convert by hand"
    init = methods.get("__init__")
    if any(
        parents.contains(cls, s) and m.matches(parents.of(parents.of(s)), m.Attribute(attr=m.Name("__init__")))
        and not (init is not None and parents.contains(init, s))
        for s in parents.names("super")
    ):
        return f"{what} calls super().__init__() outside __init__: convert by hand"
    if own_init(call, parents):
        reason = _one_super_init(init, call, parents)
    else:
        reason = _pass_through(init, parents) if init is not None else None
    if reason:
        return f"{what}: {reason}: convert by hand"
    return None


def _one_super_init(init: cst.FunctionDef, call: cst.Call, parents) -> Optional[str]:
    """Why ``call``, the ``super().__init__(...)`` of ``init``, is not its one call of it, made
    once, as a statement of its own body, or None."""
    if len(_super_inits(init, parents)) != 1:
        return "__init__ calls super().__init__() more than once"
    if not _own_statement(call, init, parents):
        return "__init__ calls super().__init__() inside another statement (it may run more than once, or not at all)"
    return None


def _super_inits(init: cst.FunctionDef, parents) -> list:
    """What each ``super().__init__`` in ``init`` is part of (its call, where it is called)."""
    attrs = [parents.of(parents.of(s)) for s in parents.names("super") if parents.contains(init, s)]
    return [parents.of(a) for a in attrs if isinstance(a, cst.Attribute) and a.attr.value == "__init__"]


def _own_statement(call: cst.Call, init: cst.FunctionDef, parents) -> bool:
    """Is ``call`` a statement of its own in ``init``'s body (run once, whenever ``init`` runs)?"""
    return isinstance(parents.of(call), cst.Expr) and parents.of(parents.statement(call)) is init.body


def _builtin_of_self(ref, parents) -> bool:
    """``len(self)``, ``iter(self)``, ``next(self)`` (the builtins): they reach the API's dunders."""
    from dali_migrate.call_sites import _shadowed

    arg = parents.of(ref)
    call = parents.of(arg)
    return (
        isinstance(arg, cst.Arg) and arg.value is ref and arg.keyword is None and not arg.star
        and isinstance(call, cst.Call) and len(call.args) == 1
        and m.matches(call.func, m.Name("len") | m.Name("iter") | m.Name("next"))
        and not _shadowed(call.func.value, parents)
    )


def _first_param(func: cst.FunctionDef):
    positional = [*func.params.posonly_params, *func.params.params]
    return positional[0] if positional else None


def _self_name(func: cst.FunctionDef) -> Optional[str]:
    first = _first_param(func)
    return first.name.value if first is not None else None


def _is_target(node, parents) -> bool:
    cur, parent = node, parents.of(node)
    while isinstance(parent, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
        cur, parent = parent, parents.of(parent)
    if isinstance(parent, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr)) and parent.target is cur:
        return True
    return isinstance(parent, (cst.AsName, cst.Del))


def _binds(ref, parents) -> bool:
    parent = parents.of(ref)
    return _is_target(ref, parents) or isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.ImportAlias, cst.Param, cst.Global, cst.Nonlocal))


def leading(cls: cst.ClassDef) -> tuple:
    """The names of the parameters of the class's own that its ``__init__`` takes before ``*args``
    (``def __init__(self, periodic, *kargs, **kvargs)``: ``("periodic",)``): a call gives them
    first, and the iterator's arguments after them. () for (self, *args, **kwargs) or no __init__."""
    init = next((f for f in cls.body.body if isinstance(f, cst.FunctionDef) and f.name.value == "__init__"), None)
    if init is None or not isinstance(init.params.star_arg, cst.Param):
        return ()
    return tuple(q.name.value for q in init.params.params[1:])


def skipped(call: cst.Call, parents, names) -> int:
    """How many of ``call``'s first arguments go to parameters of the class's own (:func:`leading`):
    the iterator's arguments start after them (0 for DALI's iterators and a ``super().__init__``)."""
    if parents is None or names is None or own_init(call, parents):
        return 0
    found = resolve(call.func, parents, names)
    return len(leading(found[0])) if found is not None else 0


def _pass_through(init: cst.FunctionDef, parents) -> Optional[str]:
    """Why ``__init__`` does not hand all of its arguments to the base, once, or None: only then does
    the call bind them as the base iterator's call does."""
    p = init.params
    star, kw = p.star_arg, p.star_kwarg
    if p.posonly_params or not p.params or p.kwonly_params or not isinstance(star, cst.Param) or kw is None or any(
        q.default is not None for q in p.params[1:]
    ):
        return "__init__ takes arguments other than (self, [parameters of its own without defaults,] *args, **kwargs)"
    inits = _super_inits(init, parents)
    ok = [
        c for c in inits
        if isinstance(c, cst.Call) and len(c.args) == 2
        and c.args[0].star == "*" and m.matches(c.args[0].value, m.Name(star.name.value))
        and c.args[1].star == "**" and m.matches(c.args[1].value, m.Name(kw.name.value))
        and _own_statement(c, init, parents)
    ]
    if len(inits) != 1 or len(ok) != 1:
        return "__init__ does not call super().__init__(*args, **kwargs) exactly once, in its own body"
    for n in (star.name.value, kw.name.value):
        if len([r for r in parents.names(n) if parents.contains(init, r)]) != 2:
            return f"__init__ uses `{n}` other than to hand it to super().__init__()"
    return None
