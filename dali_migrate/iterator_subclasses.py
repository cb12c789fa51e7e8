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
class itself), DALI's counters ``_counter`` and ``_size`` read (not set: the emitted class keeps them
as DALI's base iterator does), and attributes of its own that neither base class uses.

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

from typing import Optional

import libcst as cst
from dali_migrate import match as m

#: what a subclass may read from its base: the public API both classes share
API = frozenset({"output_map", "batch_size", "size", "reset", "next", "__next__", "__iter__", "__len__"})
#: what a subclass may define besides methods of its own: overrides DALI's own code reaches the same way
OVERRIDES = frozenset({"__init__", "reset", "next", "__next__", "__iter__", "__len__"})
_DATA = frozenset({"output_map", "batch_size", "size"})
#: DALI's private counters, which a subclass may read (not set): the emitted class keeps both as
#: DALI's _DaliBaseIterator does, at every point a subclass can see them (checked against DALI's
#: iterator step by step: tests/test_torch_iterator.py). ColossalAI's loaders read them in __iter__.
READ = frozenset({"_counter", "_size"})


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
        if attr.startswith("_") or attr in API or attr in methods:
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
