"""``pipe.epoch_size(...)`` -> the reader's ``get_metadata()["epoch_size_padded"]`` (what a pipeline reports).

The generator holds its reader inside, so the epoch size comes from a second reader made with
the same arguments, less those that cannot change its metadata (:data:`META_ARGS`): cheap (it
lists the data set, reads nothing). A reader asked for metadata
before its first epoch fixes its batch size to 1, which is why it is not the one the loop uses.
The reader's arguments refer to the pipeline's parameters; they are replaced by what the call
site passed. Arguments that are not plain names, attributes, subscripts or literals would be
evaluated twice, so such a call site is left to a person. Where a function of the file makes the
pipeline and returns it (``pipe = create_dali_pipeline(...)``), the arguments are those of its own
call of the pipeline, followed out through its parameters to its caller (``call_sites.in_caller``).
The reader written again must read what the pipeline's read, so the use is left to a person where a
name its arguments read may be assigned between the statement that makes the pipeline and the use
(:func:`changed_before_read`, shared with the framework iterators' ``reader_meta=``), and where it
copies a parameter's default or a decorator's setting (also the iterators' batch size) that names
something the code may assign after the pipeline function is defined (:func:`defined_once`).
"""

from __future__ import annotations

import ast
import functools
import weakref
from typing import Optional

import libcst as cst

from dali_migrate import cst_walk
from dali_migrate.cst_util import code, dotted, kwarg, names_in, without_kwargs
from dali_migrate.rules import pipeline_current
from dali_migrate.rules.base import CallSiteRule

_SIMPLE = (cst.Name, cst.Attribute, cst.Subscript, cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)


# Calls whose result depends on their arguments alone (and the working directory, which does not
# change between the two evaluations): a path built with os.path.join is the usual data_dir.
_PURE_CALLS = frozenset({
    "os.path.join", "os.path.expanduser", "os.path.expandvars", "os.path.abspath", "os.path.normpath",
    "os.path.dirname", "os.path.basename", "str", "int", "float", "len", "round", "min", "max", "abs",
    # JAX fixes its devices when it starts: the shard count of DALI's JAX examples
    "jax.device_count", "jax.local_device_count", "jax.process_index", "jax.process_count",
})


def repeatable(expr) -> bool:
    """Gives the same value when evaluated a second time: names, attributes, literals, and
    operators, subscripts, containers, f-strings and pure calls made of them."""
    if isinstance(expr, _SIMPLE[:2]):  # Name, Attribute (an attribute chain of a name)
        return isinstance(expr, cst.Name) or repeatable(expr.value)
    if isinstance(expr, _SIMPLE[3:]):
        return True
    if isinstance(expr, cst.Subscript):
        return repeatable(expr.value) and all(
            isinstance(el.slice, cst.Index) and repeatable(el.slice.value) for el in expr.slice)
    if isinstance(expr, (cst.BinaryOperation, cst.BooleanOperation)):
        return repeatable(expr.left) and repeatable(expr.right)
    if isinstance(expr, cst.Comparison):  # `mode == Mode.TRAIN` for is_training
        return repeatable(expr.left) and all(repeatable(c.comparator) for c in expr.comparisons)
    if isinstance(expr, cst.UnaryOperation):
        return repeatable(expr.expression)
    if isinstance(expr, cst.IfExp):  # evaluates some of its parts, as `a or b` does
        return repeatable(expr.test) and repeatable(expr.body) and repeatable(expr.orelse)
    if isinstance(expr, (cst.Tuple, cst.List)):
        return all(isinstance(el, cst.Element) and repeatable(el.value) for el in expr.elements)
    if isinstance(expr, cst.FormattedString):
        return all(not isinstance(part, cst.FormattedStringExpression) or repeatable(part.expression)
                   for part in expr.parts)
    if isinstance(expr, cst.Call):
        from dali_migrate.cst_util import dotted

        return dotted(expr.func) in _PURE_CALLS and all(
            not a.star and repeatable(a.value) for a in expr.args)
    return False


class CannotConvert(Exception):
    pass


def _made_at(site):
    """The node whose statement makes the pipeline the code at the use holds: its own call, or
    the call of the function of the file that makes and returns it (the reader written again is
    then in that caller's terms); None where it is not in the file as analysed."""
    parents = site.parents
    if parents is None:
        return None
    node = site.construction
    if node is None:
        found = getattr(site, "factory", None)
        node = found.levels[-1][1] if found is not None and not isinstance(found, str) and found.levels else None
    if node is None:
        return None
    if id(node) not in parents.span and isinstance(node, cst.Call):
        node = node.func  # one element of a list of pipelines: its call with the element's values
    return node if id(node) in parents.span else None


def changed_before_read(site, call, value, skip=frozenset(), made_at=None, any_global=False) -> Optional[str]:
    """A name ``value`` reads that the code may assign (or mutate: ``args.batch = 2``) after the
    statement that makes the pipeline starts and before ``call`` reads ``value`` again: in between
    in the text, or in a loop around ``call`` (not before the statement in a loop that makes the
    pipeline again). None where nothing may, or where ``call`` is not the file's own node (a call
    as other rules rewrote it: the caller decided on the original); a name where that cannot be
    told (another scope, ``global``/``nonlocal``). ``skip``: names the copy binds itself (a
    comprehension's variable); ``made_at``: a node of the statement to start at other than the one
    that makes the pipeline; ``any_global``: a name declared ``global`` in the scope itself counts
    too (the batch size's older, wider rule: it binds such a value once, which is as exact)."""
    names = cst_walk.variables(value) - set(skip)
    if not names:
        return None
    parents = site.parents
    made_at = made_at if made_at is not None else _made_at(site)
    if made_at is None or call is None or id(call) not in parents.span:
        return None
    # The rules plan an iterator several times (its blocker, its rewrite, what it adds), each time
    # with a new copy of the same reader arguments: the answer for the same text at the same place
    # is worked out once per conversion.
    key = (id(call), id(made_at), code(value), frozenset(skip), any_global)
    memo = cst_walk.remembered(lambda _: {}, parents.order[0], key=_changed_memo_key)
    if key not in memo:
        memo[key] = _changed_before_read(parents, call, value, names, made_at, any_global)
    return memo[key]


def _changed_memo_key(_):
    """(names :func:`changed_before_read`'s per-conversion memo, kept on the module's node)"""


def _scope_stores(scope, parents) -> tuple:
    """(the nodes of ``scope`` that may bind or store a name, with their positions; its loops):
    the same for every question about the scope, gathered once per conversion."""
    from dali_migrate.call_sites import _scope_nodes

    own = _scope_nodes(scope, parents)
    span = parents.span
    stores = [
        (span[id(node)][0], node) for node in [*own.nodes, *own.nested]
        if isinstance(node, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr, cst.Del,
                             cst.AsName, cst.FunctionDef, cst.ClassDef)) and id(node) in span
    ]
    loops = [n for n in own.nodes if isinstance(n, (cst.For, cst.While))]
    return stores, loops


def _changed_before_read(parents, call, value, names: set, made_at, any_global: bool) -> Optional[str]:
    stmt = parents.statement(made_at)
    scope = parents.scope(stmt)
    if scope is not parents.scope(call):
        return sorted(names)[0]
    scope_node = scope if scope is not None else parents.order[0]
    stores, all_loops = cst_walk.remembered(lambda n: _scope_stores(n, parents), scope_node, key=_scope_stores)
    span = parents.span
    start, read = span[id(stmt)][0], span[id(call)][0]
    loops = [n for n in all_loops if parents.contains(n, call)]
    for node in parents.find((cst.Global, cst.Nonlocal)):
        # one in the scope itself makes the name its enclosing scope's, which runs no code meanwhile:
        # only its own stores (below) change it; one elsewhere lets a function called here assign it
        if parents.scope(node) is scope and not any_global:
            continue
        hit = {n.name.value for n in node.names} & names
        if hit:
            return sorted(hit)[0]
    # what the value reads, as written (`args.batch`, `cfg["bs"]`): a store to one of them or to a
    # holder of one (`args.cfg = ...` for `args.cfg.batch`) changes it; one to `self.val_pipe` does not
    reads = {code(n) for n in cst_walk.walk(value) if isinstance(n, (cst.Name, cst.Attribute, cst.Subscript))}

    def stored(target) -> set:
        parts = target.elements if isinstance(target, (cst.Tuple, cst.List)) else [target]
        hit = set()
        for part in parts:
            part = part.value if isinstance(part, (cst.Element, cst.StarredElement)) else part
            if isinstance(part, (cst.Tuple, cst.List)):
                hit |= stored(part)
            elif isinstance(part, (cst.Attribute, cst.Subscript)):
                text = code(part)
                if any(r == text or r.startswith((text + ".", text + "[")) for r in reads):
                    hit |= cst_walk.variables(part) & names
            else:
                hit |= cst_walk.variables(part) & names
        return hit

    for at, node in stores:
        # (a store outside the window and outside every loop around the use cannot matter: the
        # cheap position test goes first)
        if not (start < at < read) and not loops:
            continue
        if isinstance(node, cst.AsName):
            hit = cst_walk.variables(node.name) & names
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            hit = {node.name.value} & names
        else:
            hit = stored(node.target)
        if not hit:
            continue
        if start < at < read or any(not (parents.contains(loop, stmt) and at < start) and parents.contains(loop, node)
                                    for loop in loops):
            return sorted(hit)[0]
    return None


def _read_by(reader: cst.BaseExpression) -> list:
    """The expressions a reader written again evaluates: its call's arguments, or, for a reader
    chosen by ``if`` (``a if test else b``), the tests and each branch's arguments."""
    if isinstance(reader, cst.IfExp):
        return [reader.test, *_read_by(reader.body), *_read_by(reader.orelse)]
    return [a.value for a in reader.args]


def reader_changed(site, call, reader: cst.BaseExpression, use: str) -> Optional[str]:
    """Why the reader written again at ``call`` (``reader``, the pipeline's with its parameters
    replaced) may read other values than the pipeline's did, or None; ``use`` names ``call``."""
    skip = cst_walk.variables(site.comp.for_in.target) if site.comp is not None else set()
    for value in _read_by(reader):
        name = changed_before_read(site, call, value, skip)
        if name is not None:
            break
    else:
        # a list of pipelines: its comprehension is evaluated again over the same iterable
        name = changed_before_read(site, call, site.comp.for_in.iter) if site.comp is not None else None
    if name is None:
        return None
    return (f"the pipeline's reader reads `{name}`, which may be assigned again before {use}: "
            f"compute it once before making the pipeline, or convert by hand")


def _module_constant(name: str, parents) -> bool:
    """``name`` keeps, as long as the module runs, the value it had when the module bound it: bound
    once at module level (outside a loop) or not at all (a builtin), never declared ``global``."""
    from dali_migrate.call_sites import module_bindings

    if any(name in {n.name.value for n in node.names} for node in parents.find(cst.Global)):
        return False
    if any(isinstance(n.names, cst.ImportStar) for n in parents.find(cst.ImportFrom)):
        return False
    stmts, in_loop = module_bindings(name, parents)
    return len(stmts) <= 1 and not in_loop


def defined_once(site, expr) -> Optional[str]:
    """A name that may make ``expr`` (a parameter's default, a decorator's setting: evaluated once,
    where the pipeline function is defined) give another value when evaluated again elsewhere, or
    None where it cannot: literals, and module constants (:func:`_module_constant`) of the
    pipeline's own module that nothing stores into or calls methods of where ``expr`` reads
    through them (``CFG.root``; a module an import binds may be read through)."""
    names = cst_walk.variables(expr)
    if not names:
        return None
    parents, func = site.parents, site.pipeline.func
    if getattr(site.pipeline, "imported_from", None) is not None:
        # a module-level pipeline of another file of the project: imported_pipelines converts its
        # uses only where each such name is bound once at its top level and imported here as it is
        return None
    if parents is None or id(func) not in parents.span:
        return sorted(names)[0]
    if parents.scope(func) is not None:
        # defined in the function that makes the pipeline (a `with pipe:` graph's): what it reads
        # must not change from there to the call that makes it (from there on, as the call's own)
        made_at = _made_at(site)
        if made_at is None or parents.scope(made_at) is not parents.scope(func):
            return sorted(names)[0]
        return changed_before_read(site, made_at, expr, made_at=func)
    reads = {code(n) for n in cst_walk.walk(expr) if isinstance(n, (cst.Attribute, cst.Subscript))}
    imported = {code(a.asname.name if a.asname is not None else a.name).split(".")[0]
                for a in parents.find(cst.ImportAlias)}
    made_at = _made_at(site)
    for name in sorted(names):
        if not _module_constant(name, parents):
            # bound again somewhere in the module (a notebook's later cell, `batch_size = 200` once
            # more): where the pipeline is made at module level too, only a binding from the def to
            # there (or in a loop around it) changes what the copy reads; from there on the use's
            # own check (changed_before_read) looks
            if made_at is None or parents.scope(made_at) is not None:
                return name
            if changed_before_read(site, made_at, cst.Name(name), made_at=func) is not None:
                return name
        through = [r for r in reads if r.startswith((name + ".", name + "["))]
        if not through:
            continue
        for node in parents.find((cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.Del)):
            target = node.target
            if isinstance(target, (cst.Attribute, cst.Subscript)):
                text = code(target)
                if any(r == text or r.startswith((text + ".", text + "[")) for r in through):
                    return name
        if name not in imported:
            # an object of the file's (a config): a method of it may change what it holds
            for node in parents.find(cst.Call):
                if isinstance(node.func, cst.Attribute) and code(node.func).startswith((name + ".", name + "[")):
                    if not any(code(node.func) == r for r in through):
                        return name
    return None


def _defined_once_or_raise(site, what: str, expr) -> None:
    name = defined_once(site, expr)
    if name is not None:
        raise CannotConvert(
            f"{what} `{code(expr).strip()}`, evaluated once where the pipeline function is defined, and "
            f"`{name}` may be assigned after that (the code at the use would read the new value): "
            f"pass it where the pipeline is made")


def _param_values(info, construction: cst.Call) -> dict:
    return {name: value for name, (value, _) in _param_sources(info, construction).items()}


def _param_sources(info, construction: cst.Call) -> dict:
    """{parameter or setting: (expression, whether it is the parameter's default)} of ``construction``."""
    params = info.func.params
    positional = [*params.posonly_params, *params.params]
    values = {p.name.value: (p.default, True) for p in [*positional, *params.kwonly_params] if p.default is not None}
    pos_args = [a for a in construction.args if a.keyword is None]
    for param, arg in zip(positional, pos_args):
        values[param.name.value] = (arg.value, False)
    for arg in construction.args:
        if arg.keyword is not None:
            values[arg.keyword.value] = (arg.value, False)
    return values


def made(site) -> tuple:
    """(the pipeline's own call, None) where the pipeline is made where it is used, or (that call,
    the call_sites.Made of the functions that made and returned it); raises CannotConvert where it
    cannot be told (a function's parameter, a factory with several returns)."""
    if site.construction is not None:
        return site.construction, None
    found = getattr(site, "factory", None)
    if found is None:
        raise CannotConvert("the pipeline was made by another function, whose arguments cannot be matched")
    if isinstance(found, str):
        raise CannotConvert(f"the pipeline was made by another function, whose arguments cannot be matched: {found}")
    return found.construction, found


def _at_module(site, found) -> bool:
    """Whether the pipeline function's decorator and defaults are evaluated at module level (else
    in the function that makes the pipeline: a `with pipe:` graph of a factory)."""
    scope = site.parents.scope(site.pipeline.func)
    if scope is None:
        return True
    if scope is found.levels[0][0]:
        return False
    raise CannotConvert("the pipeline function is defined inside a function other than the one that makes it")


def _in_caller(site, found, expr, at_module: bool):
    from dali_migrate.call_sites import in_caller

    value = in_caller(found, expr, site.parents, at_module=at_module)
    if isinstance(value, str):
        raise CannotConvert(f"the pipeline is made by {found.levels[-1][0].name.value}(), and {value}")
    return value


def made_value(site, param: str, setting=None):
    """What the pipeline's parameter ``param`` gets where it is made (else the decorator's
    ``setting``), as the code that uses the pipeline can evaluate it; None where neither gives one.
    Raises CannotConvert."""
    info = site.pipeline
    construction, found = made(site)
    sources = _param_sources(info, construction)
    if param in sources:
        value, default = sources[param]
        what = f"the pipeline's parameter `{param}` defaults to"
    elif setting is not None and setting in info.settings:
        value, default = info.settings[setting], True
        what = f"the decorator gives {setting}="
    else:
        return None
    # (evaluated in the function that makes the pipeline where the pipeline function is defined there)
    at_module = default and (found is None or _at_module(site, found))
    if at_module:
        _defined_once_or_raise(site, what, value)
    if found is None:
        return value
    return _in_caller(site, found, value, at_module)


class _Substitute(cst.CSTTransformer):
    def __init__(self, values: dict, params: set, site=None, defaults=frozenset()):
        self.values, self.params = values, params
        self.site, self.defaults = site, defaults

    def leave_Name(self, original, updated):
        if original.value in self.params:
            if original.value not in self.values:
                raise CannotConvert(f"parameter `{original.value}` has no value at this call")
            value = self.values[original.value]
            if not repeatable(value):
                raise CannotConvert(f"`{original.value}` is passed an expression that would run twice")
            if original.value in self.defaults:
                _defined_once_or_raise(self.site, f"the pipeline's parameter `{original.value}` defaults to", value)
            return value
        return updated

    def visit_Arg(self, node):
        return True


# What the written-again reader is read for (epoch_size, epoch_size_padded, number_of_shards,
# shard_id, pad_last_batch, stick_to_shard) follows from the data set and these of the arguments a
# reader takes from DALI's common reader schema (catalog ``loader_args``); the others (shuffling,
# seed, prefetching, lazy_init, ...) are left out of it, so that they are not evaluated again for
# nothing, a name they read cannot block the use, and pipelines chosen through a variable whose
# readers differ only in them (train and validation) get the same text.
META_ARGS = frozenset({"num_shards", "shard_id", "pad_last_batch", "stick_to_shard"})

# The readers (dynamic-mode names) for which tests/test_reader_meta_args.py builds the reader on the
# CPU with and without each of the other loader arguments, at several values, and finds the same
# metadata, also as a pipeline's reader: only these are written again without them.
META_PROVEN = frozenset({
    "readers.File", "readers.Numpy", "readers.TFRecord", "readers.COCO", "readers.Caffe", "readers.Caffe2",
    "readers.MXNet", "readers.Webdataset", "readers.NemoAsr", "experimental.readers.Video",
})


@functools.lru_cache(maxsize=None)
def meta_free_args(ndd_name: str) -> frozenset:
    """The arguments of the reader ``ndd_name`` (``"readers.File"``) that cannot change its
    metadata: its loader arguments but :data:`META_ARGS`, where it is in :data:`META_PROVEN`."""
    if ndd_name not in META_PROVEN:
        return frozenset()
    from dali_migrate import catalog

    found = [set(info.loader_args) for info in catalog.load().all() if info.is_reader and info.ndd_name == ndd_name]
    # (a reader that several fn names reach: only what each of them takes from the loader schema)
    return frozenset(set.intersection(*found) - META_ARGS) if found else frozenset()


def _meta_free_kwargs(reader: cst.Call) -> frozenset:
    """The keyword arguments of ``reader`` (a converted ``ndd.readers.X(...)`` call) that the
    reader written again for its metadata leaves out (:func:`meta_free_args`); none for a reader
    on another device than the CPU: the proof runs on the CPU."""
    device = kwarg(reader, "device")
    if device is not None and not (isinstance(device.value, cst.SimpleString) and device.value.evaluated_value == "cpu"):
        return frozenset()
    parts = (dotted(reader.func) or "").split(".")
    for k in range(1, len(parts)):  # after the dynamic-mode module's name, whatever it is bound to
        name = ".".join(parts[k:])
        if name in META_PROVEN:
            return meta_free_args(name)
    return frozenset()


def named_reader(info, name: Optional[cst.BaseExpression], use=None, parents=None, site=None):
    """The reader of the pipeline ``info`` made with ``name=`` the string ``name`` names (both
    written as string literals), or None: what ``reader_name=`` / ``epoch_size(name)`` select.
    ``use`` (the call that names it) and ``parents``: also the one reader of a pipeline defined in
    the function that uses it, made with ``name=v`` where the use says ``v`` too (_same_variable);
    with ``site``, the one reader made with ``name=<parameter>`` where the call that made the
    pipeline passed that parameter what the use says (_passed_the_same)."""
    if name is not None and use is not None and parents is not None and len(info.readers) == 1:
        arg = kwarg(info.readers[0].call, "name")
        if arg is not None and isinstance(arg.value, cst.Name):
            if isinstance(name, cst.Name) and arg.value.value == name.value \
                    and _same_variable(name.value, info.func, use, parents):
                return info.readers[0]
            if site is not None and _passed_the_same(info, arg.value.value, name, use, site):
                return info.readers[0]
            if site is not None and isinstance(name, cst.SimpleString) and _named_by_the_caller(arg.value.value, name, site):
                return info.readers[0]
    if not isinstance(name, cst.SimpleString):
        return None
    found = [r for r in info.readers if _literal_name(r) == name.evaluated_value]
    return found[0] if len(found) == 1 else None


def _named_by_the_caller(var: str, name: cst.SimpleString, site) -> bool:
    """``name=<var>`` in a ``with pipe:`` graph of a factory, where the call of the factory that
    made the pipeline gives ``var`` the string the use names (deepglint's
    ``create_dali_pipeline(..., name="loader_train")`` and ``reader_name="loader_train"``)."""
    try:
        _, found = made(site)
        if found is None:
            return False
        value = _in_caller(site, found, cst.Name(var), _at_module(site, found))
    except CannotConvert:
        return False
    return isinstance(value, cst.SimpleString) and value.evaluated_value == name.evaluated_value


def _passed_the_same(info, param: str, name, use, site) -> bool:
    """``name=<param>`` in the pipeline, ``<param>=X`` in the call that made it where the use is
    (``self.name`` in ``img_pipe(name=self.name)`` and ``reader_name=self.name``), with X
    repeatable and not changed between the two: both are the same value."""
    from dali_migrate.pipeline_analysis import _assigned_names, _param_names

    if site.construction is None or param not in _param_names(info.func.params) \
            or any(param in _assigned_names(stmt) for stmt in info.statements):
        return False
    value, default = _param_sources(info, site.construction).get(param, (None, True))
    return (not default and value.deep_equals(name) and repeatable(value)
            and changed_before_read(site, use, value) is None)


def _same_variable(var: str, pipeline: cst.FunctionDef, use, parents) -> bool:
    """Do the pipeline's ``var`` (a ``with pipe:`` graph of a function, made a function of its own
    there) and ``var`` at ``use`` hold the same value? Both read the variable of the function that
    holds them, which binds it once (a parameter, or one assignment) and the pipeline not at all."""
    from dali_migrate.legacy import _bindings
    from dali_migrate.pipeline_analysis import _param_names

    outer = parents.scope(pipeline)
    if not isinstance(outer, cst.FunctionDef) or parents.scope(use) is not outer:
        return False
    if var in _param_names(pipeline.params) or any(var in _bindings(s) for s in pipeline.body.body):
        return False
    bound = sum(var in _bindings(s) for s in outer.body.body) + (var in _param_names(outer.params))
    loops = (cst.For, cst.While)
    in_loop = any(isinstance(n, loops) and var in _bindings(n) for n in cst_walk.walk(outer.body))
    return bound == 1 and not in_loop and not any(
        var in {n.value for n in g.names} for g in cst_walk.walk(outer) if type(g) in (cst.Global, cst.Nonlocal)
    )


def _literal_name(reader) -> Optional[str]:
    arg = kwarg(reader.call, "name")
    return arg.value.evaluated_value if arg is not None and isinstance(arg.value, cst.SimpleString) else None


#: per file (its parents index): {id(the pipeline's call): (the statements that ask the
#: pipeline's questions again, {name: the name they bind it to}) or None}, and under "taken" the
#: names given so far: every rule that plans a use of the pipeline gets the same statements
_ASKED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _asked_before(site, local: set, reader_index) -> Optional[dict]:
    """{name: the name it is bound to} where the statement that makes the pipeline of ``site`` can
    be preceded by statements asking the pipeline's questions for ``local`` again
    (shared_setup.asked_again); None where not. The statements: :func:`asked_statements`."""
    from dali_migrate.shared_setup import NotShared, asked_again

    construction = site.construction
    parents = site.parents
    stmt = parents.statement(construction) if construction is not None and parents is not None else None
    if not isinstance(stmt, cst.SimpleStatementLine) or not isinstance(parents.of(stmt), (cst.IndentedBlock, cst.Module)):
        return None
    memo = _ASKED.setdefault(parents, {"taken": set(site.taken)})
    key = (id(construction), frozenset(local), reader_index if reader_index is not None else site.pipeline.reader_index)
    if key not in memo:
        try:
            block, values = asked_again(site.pipeline, construction, parents, local, memo["taken"], reader_index)
        except NotShared:
            memo[key] = None
        else:
            memo[key] = (block, values)
            memo.setdefault(id(construction), []).append(memo[key])
    found = memo[key]
    return None if found is None else found[1]


def asked_statements(site) -> list:
    """The statements that go right before the one making the pipeline of ``site``: what
    :func:`_asked_before` planned for it (none where nothing was)."""
    memo = _ASKED.get(site.parents, {}) if site.parents is not None else {}
    return [s for block, _ in memo.get(id(site.construction), []) for s in block]


def reader_expression(site, reader=None, asked_ok: bool = False) -> cst.BaseExpression:
    """The reader the pipeline of ``site`` made, written again where it is used, for its metadata.
    ``reader``: which of the pipeline's readers (one of ``site.pipeline.readers``), where it has
    several. ``asked_ok``: the caller puts :func:`asked_statements` before the statement that makes
    the pipeline (a PyTorch iterator's rule does), so questions asked inside try/except may be
    asked again there."""
    info = site.pipeline
    converted = site.reader_call
    if len(info.readers) > 1:
        if reader is None:
            raise CannotConvert("the pipeline has several readers and the use does not name one")
        converted = reader.converted
    if converted is None:
        raise CannotConvert("the pipeline has no reader")
    construction, found = made(site)
    params = info.func.params
    param_names = {p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]}
    reader_index = reader.index if reader is not None else None
    chosen = reader if reader is not None else info.readers[0]
    # A reader chosen by `if`/`else` is made again the same way: its tests, then each branch's call.
    branches = chosen.converted_branches or [(None, converted)]
    branches = [(test, without_kwargs(call, {"seed"} | _meta_free_kwargs(call))) for test, call in branches]
    reader = _Branches(branches)
    used = names_in(cst.Module(body=[cst.SimpleStatementLine([cst.Expr(cst.Tuple([cst.Element(a.value) for a in reader.args]))])]))
    # (`device_id = Pipeline.current().device_id` holds the setting, given below as the call's)
    local = used & info.setup_names - param_names - pipeline_current.self_read_names(info)
    if local:
        # The code that makes the pipeline may compute them the same way (a rank and world size);
        # then its own names are the reader's arguments and stay as they are below. (Not through
        # factories, whose names are not the caller's, nor for names the call's settings replace.)
        from dali_migrate.shared_setup import NotShared, check, inlined

        reason = ""
        shared = found is None and not local & {"seed", "batch_size", "num_threads", "device_id"}
        if shared:
            try:
                check(info, construction, site.parents, local, reader_index)
            except NotShared as e:
                shared, reason = False, f" {e}"
                # The caller does not ask itself: the pipeline's questions, asked again here.
                from dali_migrate.call_sites import map_variables as replaced

                try:
                    # (the pipeline's parameters they read are replaced below by what the call passes)
                    values = inlined(info, site.construction, site.parents, local, reader_index, params_ok=True)
                except NotShared:
                    # asked in a try/except: asked again by statements right before the pipeline is made
                    values = _asked_before(site, local, reader_index) if asked_ok else None
                    if values is not None:
                        shared = True
                        reader = reader.mapped(lambda v: replaced(v, values.get))
                else:
                    shared = True
                    reader = reader.mapped(lambda v: replaced(v, values.get))
        if not shared:
            raise CannotConvert(f"the reader's arguments use {', '.join(sorted(local))}, computed inside the pipeline{reason}")
    settings = {"seed", "batch_size", "num_threads", "device_id"}
    if found is None:
        sources = _param_sources(info, construction)
        values = {name: value for name, (value, _) in sources.items()}
        # a nested pipeline function's defaults are evaluated where it is defined: defined_once refuses them
        defaults = {name for name, (_, default) in sources.items() if default}
        substitute = _Substitute(values, param_names | settings, site, defaults)
        return reader.mapped(lambda v: v.visit(substitute)).expression()
    # Made by functions of the file: each name the reader reads is followed out to the caller.
    from dali_migrate.call_sites import map_variables

    sources = _param_sources(info, construction)
    at_module = _at_module(site, found)

    def value_of(name: str):
        # A setting a `with pipe:` graph of a factory reads (`shard_id=device_id`) is the factory's
        # own name, as in pipeline mode; a @pipeline_def function's comes from its call.
        if name in param_names or (at_module and name in settings):
            if name not in sources:
                raise CannotConvert(f"parameter `{name}` has no value at this call")
            value, default = sources[name]
            if default and at_module:
                _defined_once_or_raise(site, f"the pipeline's parameter `{name}` defaults to", value)
            value = _in_caller(site, found, value, default and at_module)
            if not repeatable(value):
                raise CannotConvert(f"`{name}` is passed an expression that would run twice")
            return value
        # read where the pipeline function is defined: the factory (a `with pipe:` graph), or globals
        return _in_caller(site, found, cst.Name(name), at_module)

    return reader.mapped(lambda v: map_variables(v, value_of)).expression()


_CONSTANT_NODES = (ast.Expression, ast.Constant, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.cmpop, ast.boolop, ast.Not)


def _constant_truth(test: cst.BaseExpression) -> Optional[bool]:
    """The truth of a test made of constants alone (``None is not None``, ``3 > 1``), else None."""
    try:
        tree = ast.parse(code(test).strip(), mode="eval")
    except SyntaxError:
        return None
    if not all(isinstance(n, _CONSTANT_NODES) for n in ast.walk(tree)):
        return None
    try:
        return bool(eval(compile(tree, "<test>", "eval"), {"__builtins__": {}}))  # noqa: S307 - constants only
    except Exception:  # noqa: BLE001 - `1 < "a"` and the like: leave the test to run
        return None


class _Branches:
    """A reader's call, or the calls of the branches of the ``if`` that chose it with their tests,
    as one thing whose expressions (``args``: the calls' arguments and the tests) are rewritten
    together, then written as one expression (``a if test else b``)."""

    def __init__(self, branches):
        self.branches = branches  # [(test or None, call)]

    @property
    def args(self) -> list:
        found = []
        for test, call in self.branches:
            if test is not None:
                found.append(cst.Arg(test))
            found.extend(call.args)
        return found

    def mapped(self, change) -> "_Branches":
        return _Branches([
            (None if test is None else change(test),
             call.with_changes(args=[a.with_changes(value=change(a.value)) for a in call.args]))
            for test, call in self.branches])

    def expression(self) -> cst.BaseExpression:
        # A test that the call's values decide (`None is not None` where the call passes nothing)
        # chooses its branch here, as the pipeline's `if` did when it was made.
        branches = []
        for test, call in self.branches:
            known = None if test is None else _constant_truth(test)
            if known is False:
                continue
            branches.append((None if known else test, call))
            if known or test is None:
                break
        *chosen, (_, last) = branches
        out = last
        for test, call in reversed(chosen):
            out = cst.IfExp(test=test, body=call, orelse=out)
        # (parenthesized: `.get_metadata()` follows it)
        return out.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) if chosen else out


def _epoch_size(reader: cst.BaseExpression) -> cst.BaseExpression:
    return cst.Subscript(
        value=cst.Call(func=cst.Attribute(value=reader, attr=cst.Name("get_metadata"))),
        slice=[cst.SubscriptElement(cst.Index(cst.SimpleString('"epoch_size_padded"')))],
    )


def _chosen_readers(info, name_arg):
    """The readers of a pipeline of several readers whose epoch sizes ``pipe.epoch_size(name_arg)``
    gives (all of them without a name), or why they cannot be told (a str)."""
    if name_arg is not None:
        reader = named_reader(info, name_arg)
        if reader is None:
            return "pipe.epoch_size(name): cannot match the name to one of the pipeline's readers; use reader.get_metadata() by hand"
        return [reader]
    names = [_literal_name(r) for r in info.readers]
    if None in names or len(set(names)) < len(names):
        return ("pipe.epoch_size() of a pipeline whose readers are not each named with a string of its own "
                "(its keys would be names DALI made up): use each reader's get_metadata() by hand")
    # the dict DALI gives comes from a std::map: sorted by the readers' names
    return sorted(info.readers, key=_literal_name)


def _rewrite(call, receiver, site):
    name_arg = call.args[0].value if call.args else None
    if len(site.pipeline.readers) > 1:
        chosen = _chosen_readers(site.pipeline, name_arg)
        if name_arg is not None:
            return _epoch_size(reader_expression(site, chosen[0]))
        from dali_migrate.rules.torch_iterator import _one_line

        # one reader a line, at the indentation of the statement's block and one level more
        line = cst.ParenthesizedWhitespace(first_line=cst.TrailingWhitespace(), indent=True, last_line=cst.SimpleWhitespace("    "))
        elements = [
            cst.DictElement(kwarg(r.call, "name").value, _epoch_size(_one_line(reader_expression(site, r))),
                            comma=cst.Comma(whitespace_after=line))
            for r in chosen
        ]
        last = elements[-1].comma.with_changes(whitespace_after=line.with_changes(last_line=cst.SimpleWhitespace("")))
        elements[-1] = elements[-1].with_changes(comma=last)
        return cst.Dict(elements, lbrace=cst.LeftCurlyBrace(whitespace_after=line))
    meta = _epoch_size(reader_expression(site))
    reader_name = kwarg(site.pipeline.reader_call, "name") if site.pipeline.reader_call is not None else None
    if name_arg is None:
        return cst.Dict([cst.DictElement(reader_name.value, meta)])
    return meta


def blocker(call, site):
    name_arg = call.args[0].value if call.args else None
    chosen = [None]
    if len(site.pipeline.readers) > 1:
        chosen = _chosen_readers(site.pipeline, name_arg)
        if isinstance(chosen, str):
            return chosen
    for which in chosen:
        try:
            reader = reader_expression(site, which)
        except CannotConvert as e:
            return f"pipe.epoch_size(): {e}; use reader.get_metadata()[\"epoch_size_padded\"] by hand"
        changed = reader_changed(site, call, reader, "pipe.epoch_size()")
        if changed:
            return f"pipe.epoch_size(): {changed}"
    if len(site.pipeline.readers) > 1:
        return None
    reader_name = kwarg(site.pipeline.reader_call, "name")
    if name_arg is None and reader_name is None:
        return "pipe.epoch_size() of an unnamed reader: use reader.get_metadata() by hand"
    if name_arg is not None and not (
        isinstance(name_arg, cst.SimpleString)
        and reader_name is not None
        and isinstance(reader_name.value, cst.SimpleString)
        and reader_name.value.evaluated_value == name_arg.evaluated_value
    ):
        return "pipe.epoch_size(name): cannot match the name to the pipeline's reader; use reader.get_metadata() by hand"
    return None


RULE = CallSiteRule(
    id="pipe-epoch-size",
    summary='pipe.epoch_size("Reader") becomes ndd.readers.<Class>(<the arguments its metadata depends on>).get_metadata()["epoch_size_padded"]',
    receiver="pipeline",
    methods=("epoch_size",),
    rewrite=_rewrite,
    blocker=blocker,
)
