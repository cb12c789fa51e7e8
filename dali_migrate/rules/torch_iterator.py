"""PyTorch ``DALIGenericIterator`` / ``DALIClassificationIterator`` over one converted pipeline ->
``DaliTorchIterator(pipe, output_map, ...)``, a class written into the converted file.

    loader = DALIGenericIterator(              loader = DaliTorchIterator(
        [pipe], ["data", "label"],                 pipe, ["data", "label"], batch_size=32,
        reader_name="Reader",                      reader_meta=ndd.readers.File(...).get_metadata(),
        last_batch_policy=LastBatchPolicy.DROP)    last_batch_policy="DROP")

The class (``dali_migrate/emitted_torch_iterator.py``) is DALI 2.4's iterator logic for one
pipeline: the same counters decide how many batches of the converted generator (the same stream as
``pipe.run()``) make an epoch, which batch is left out (DROP) or cut (PARTIAL), and what
``reset()``, ``len()``, ``auto_reset`` and ``prepare_first_batch`` do. Each output becomes a
torch tensor with ``Batch.torch()`` (dense, like the original's ``as_tensor()``; ragged outputs
fail in both). Uses of the iterator (``for data in loader``, ``data[0]["data"]``) stay as they are.

Several pipelines, one per GPU (``It([pipe0, pipe1], ...)``, or ``It(pipes, ...)`` for
``pipes = [P(..., device_id=i, shard_id=i) for i in range(n)]``, see ``pipe_lists``), become
``DaliTorchMultiIterator(pipes, ..., reader_meta=[<each pipeline's reader>.get_metadata(), ...])``,
which yields one dict per pipeline as DALI does (each pipeline's shard, the counters per shard).
Every pipeline must be one the tool converts, made where it can see it, with batch sizes written
the same; they are converted together or not at all. A comprehension's list handed to a class or
function of the file that makes the iterator (DALI's RNN-T example: ``DaliRnntIterator(pipes, ...)``,
``DALIGenericIterator(dali_pipelines, ...)`` in its ``__init__``) gets the class with
``batch_size=None``, which reads the batch size from the first batches (:func:`_handed_reason`).

A class of the file derived from the iterator (``class Wrapper(DALIClassificationIterator)``,
PyTorch Lightning's example) is called as the iterator is and gets the emitted class as its base,
where ``iterator_subclasses`` finds that it reaches only what both classes share. A class that makes
its pipeline in ``__init__`` and hands it to ``super().__init__(pipe, ...)`` (ColossalAI's loaders)
has that call converted instead, and its own calls stay as they are.

Over a pipeline with ``fn.external_source`` the class is the framework's ``*SourceIterator``
(``DaliTorchSourceIterator``: the class with ``SOURCE_EDITS``) over ``PrefetchedPipeline(pipe)``,
and the pipeline takes the form an iterator resets (``rules/external_source.py``): DALI's iterator
calls ``pipe.schedule_run()`` / ``share_outputs()`` / ``reset()`` at set points, its pipeline draws
``prefetch_queue_depth`` batches ahead and stops at the source's end until ``reset()`` starts the
source again; the emitted classes make the same calls on the same state, so each epoch ends on
the same batch and the source runs at the same points (``prefetch_queue_depth`` /
``exec_pipelined`` of the pipeline go to ``PrefetchedPipeline``). Checked against DALI's iterator
on the CPU: tests/test_external_source_iterator.py.

A pipeline that a function of the file makes and returns (``pipe = create_dali_pipeline(...)``)
gets its batch size and reader from that function's own call of the pipeline, the function's
parameters replaced by what the caller passes (``call_sites.in_caller``). A batch size that would
run twice if written again (``batch_size=args.batch if mode == "train" else args.val_batch``) is
bound to a fresh name in a statement right before the one that makes the pipeline, where that keeps
Python's order (:func:`_bound_once`), and both read the name.

Left to a person (the pipeline and the iterator stay, with a marker): a ``last_batch_policy`` / ``fill_last_batch`` that is not written out, a ``reader_name``
that is not the pipeline's reader's ``name=``, a pipeline whose arguments cannot be matched (a
function's parameter; a factory's parameter it assigns, a value it computes itself, an argument
that would run twice), a batch size the tool cannot see, ``*args``, a reader whose arguments read a
name that may change before the iterator or a default that may have changed since the pipeline
function was defined (``pipe_epoch_size.reader_changed`` / ``defined_once``).

The epoch logic is the same for every framework's iterator (all derive from DALI's
``_DaliBaseIterator``); only the conversion of an output and the returned structure differ.
:class:`Framework` holds those differences, and the other frameworks' rules (``jax_iterator``, ``paddle_iterator``)
build their rule from it with :func:`make_rule` and their class from the torch one with
:func:`class_source`'s ``edits``.
"""

from __future__ import annotations

import dataclasses
import functools
import weakref
from pathlib import Path
from typing import Callable, Optional

import libcst as cst
from dali_migrate import match as m

from dali_migrate import cst_walk, iterator_subclasses, pipe_lists
from dali_migrate.cst_util import assignment, code, fresh_name, kwarg, names_in
from dali_migrate.rules.base import SUPERSET_SUFFIX, CallSiteRule
from dali_migrate.rules.pipe_epoch_size import (
    CannotConvert, asked_statements, changed_before_read, made, made_value, named_reader, reader_changed,
    reader_expression, repeatable)
from dali_migrate.rules.pipeline_def import reader_needs_context

CLASS_NAME = "DaliTorchIterator"
MULTI_CLASS_NAME = "DaliTorchMultiIterator"
_POLICIES = ("FILL", "DROP", "PARTIAL")
#: where a file may import LastBatchPolicy from: every framework plugin re-exports base_iterator's
#: enum (MXNet's too, in the DALI versions that have it), so each one's members mean the same
POLICY_CLASSES = tuple(
    f"nvidia.dali.plugin.{module}.LastBatchPolicy"
    for module in ("base_iterator", "pytorch", "paddle", "mxnet", "jax.iterator")
)
_POLICY_CLASSES = POLICY_CLASSES


@dataclasses.dataclass(frozen=True)
class Framework:
    """What one framework's iterators over one pipeline differ in."""

    class_name: str
    #: the key of the emitted class among the converted file's module-level helpers
    helper: str
    #: qualified iterator name -> "generic" / "classification"
    iterators: dict
    #: kind -> the constructor's parameters in positional order
    params: dict
    #: LastBatchPolicy members the iterator accepts
    policies: tuple = _POLICIES
    policy_classes: tuple = _POLICY_CLASSES
    #: before the iterator's name in reasons ("JAX ")
    prefix: str = ""
    #: framework-only arguments: {name: literal values (code) that mean the default, dropped}; any
    #: other value is a reason to leave the call to a person, taken from ``unconverted``
    defaults_only: dict = dataclasses.field(default_factory=dict)
    unconverted: dict = dataclasses.field(default_factory=dict)
    #: why a policy the iterator refuses is not converted, by policy
    refused_policy: dict = dataclasses.field(default_factory=dict)
    #: (site) -> (old, new) text edits that turn the torch class into this framework's
    edits: Callable = lambda site: ()
    #: the emitted class over several pipelines (None: several pipelines are left to a person)
    multi_class: Optional[str] = None
    multi_helper: str = ""
    #: (site) -> (old, new) text edits that turn the torch multi-pipeline class into this framework's
    multi_edits: Callable = lambda site: ()


TORCH = Framework(
    class_name=CLASS_NAME,
    helper="torch-iterator",
    iterators={
        "nvidia.dali.plugin.pytorch.DALIGenericIterator": "generic",
        "nvidia.dali.plugin.pytorch.DALIClassificationIterator": "classification",
    },
    params={
        "generic": ["pipelines", "output_map", "size", "reader_name", "auto_reset", "fill_last_batch",
                    "dynamic_shape", "last_batch_padded", "last_batch_policy", "prepare_first_batch"],
        "classification": ["pipelines", "size", "reader_name", "auto_reset", "fill_last_batch",
                           "dynamic_shape", "last_batch_padded", "last_batch_policy", "prepare_first_batch"],
    },
    multi_class=MULTI_CLASS_NAME,
    multi_helper="torch-multi-iterator",
)


@functools.lru_cache(maxsize=1)
def _emitted_source() -> str:
    # read once per process: a file with an iterator asks for it several times per pipeline
    # (issue 6 measured the reads at ~7% of a conversion)
    return Path(__file__).resolve().parent.parent.joinpath("emitted_torch_iterator.py").read_text()


def class_source(name: str = CLASS_NAME, edits=(), cls: str = CLASS_NAME) -> str:
    """The source of the emitted class ``cls``, named ``name``; ``edits`` are (old, new) replacements,
    each of a text the class holds exactly once (so that a change to the class cannot skip one silently)."""
    text = _emitted_source()
    body = text[text.index(f"\nclass {cls}:") + 1 :]
    end = body.find("\n\n\nclass ")
    body = body if end < 0 else body[: end + 1]
    for old, new in edits:
        if body.count(old) != 1:
            raise AssertionError(f"the emitted iterator class holds {body.count(old)} copies of {old!r}, not one")
        body = body.replace(old, new)
    return body.replace(cls, name)


@dataclasses.dataclass(frozen=True)
class IteratorRule(CallSiteRule):
    #: (site) -> {key: module-level source the converted file needs}
    helpers: Callable = lambda site: {}
    #: (call, site) -> [(node, rule)]: other nodes of the file rewritten with the call (by ``rule``)
    also: Callable = lambda call, site: ()


def _iterator(call: cst.Call, site, fw: Framework = TORCH):
    """(the qualified name of the DALI iterator, the file's class derived from it or None), or None
    when ``call`` makes neither (see ``iterator_subclasses``)."""
    q = site.names.qualify(call.func)
    if q in fw.iterators:
        return q, None
    found = iterator_subclasses.resolve(call.func, site.parents, site.names)
    if found is not None and found[1] in fw.iterators:
        return found[1], found[0]
    return None


def _class_name(site, fw: Framework = TORCH, multi: bool = False, source: bool = False) -> str:
    base = fw.multi_class if multi else source_class(fw) if source else fw.class_name
    return fresh_name(base, set(site.taken)) if base in site.taken else base


def source_class(fw: Framework) -> str:
    """The name of the framework's class over a pipeline with external sources."""
    return fw.class_name.replace("Iterator", "SourceIterator")


#: the class that drives a pipeline with external sources as DALI does (emitted_torch_iterator.py)
PREFETCHED = "PrefetchedPipeline"
PREFETCHED_HELPER = "prefetched-pipeline"

#: (old, new) edits that make an iterator class drive a PrefetchedPipeline as DALI's
#: _DaliBaseIterator drives a pipeline (applied after the framework's own edits): take the queued
#: batch (the first one fills the queue), check its size where DALI does, top the queue up after each
#: batch (DROP's dropped one included), and where an epoch ends reset the pipeline, which restarts
#: a source that ended, and refill it when it is empty.
SOURCE_EDITS = (
    ("            outputs = next(self._pipe)\n",
     "            outputs = self._pipe.share_outputs()\n"),
    ("        return outputs\n",
     "        if self._reader or self._size != -1:\n"
     "            assert all(out.batch_size == self.batch_size for out in outputs), (\n"
     "                \"Variable batch size is not supported by the iterator when reader_name is provided or \"\n"
     "                \"iterator size is set explicitly\")\n"
     "        return outputs\n"),
    ("        self._advance()\n",
     "        self._pipe.schedule_run()\n        self._advance()\n"),
    ("                self._take()\n",
     "                self._take()\n                self._pipe.schedule_run()\n"),
    ("\n        else:\n            import logging",
     "\n            self._pipe.reset()\n"
     "            if self._pipe.empty():\n"
     "                self._pipe.schedule_run()\n        else:\n            import logging"),
)


#: the iterators' parameters whose default is None: None written out is the same as none given
_NONE_DEFAULTS = frozenset({"reader_name", "fill_last_batch"})


def _args(call: cst.Call, kind: str, fw: Framework = TORCH, skip: int = 0):
    """{parameter: expression} as the iterator's signature binds them, or a reason. ``skip``: the
    first arguments go to a subclass's own parameters (iterator_subclasses.leading)."""
    params = fw.params[kind]
    bound = {}
    for i, arg in enumerate(call.args[skip:]):
        if arg.star:
            return f"{_short(kind, fw)}(...) with *args/**kwargs: convert by hand"
        if arg.keyword is None:
            if i >= len(params):
                return f"{_short(kind, fw)}(...) with more positional arguments than it takes"
            bound[params[i]] = arg.value
        else:
            if arg.keyword.value not in params:
                return f"{_short(kind, fw)}(...) gets {arg.keyword.value}=, which dali-migrate does not know"
            bound[arg.keyword.value] = arg.value
    return {k: v for k, v in bound.items() if not (k in _NONE_DEFAULTS and m.matches(v, m.Name("None")))}


def _short(kind: str, fw: Framework = TORCH) -> str:
    return fw.prefix + ("DALIGenericIterator" if kind == "generic" else "DALIClassificationIterator")


def _policy(expr, names, fw: Framework = TORCH):
    q = names.qualify(expr) if names is not None else None
    if q is None:
        return None
    cls, _, member = q.rpartition(".")
    return member if cls in fw.policy_classes and member in _POLICIES else None


def _batch_size(site, call: cst.Call, alone: bool = True):
    """The batch size as the iterator's statement can read it: the expression the pipeline is made
    with, or the name it is bound to first (:func:`_bound_once`; only where ``alone``, one pipeline)."""
    info = site.pipeline
    made(site)  # raises where it cannot be told
    if "batch_size" in info.computed_settings:
        value = _computed_batch_size(site, info.computed_settings["batch_size"])
        why = _why_bound(site, call, value)
        if why is not None:
            raise CannotConvert(why)  # (no argument of the call to bind once: the pipeline computes it)
        return value
    key = info.bound_settings.get("batch_size", "batch_size")
    value = made_value(site, key, "batch_size")
    if value is None:
        raise CannotConvert("the pipeline's batch size is not given where it is made")
    why = _why_bound(site, call, value)
    if why is not None:
        bound = _bound_once(site, call, key, value) if alone else None
        if bound is None:
            raise CannotConvert(why)
        return cst.Name(bound[0])
    return value


def _computed_batch_size(site, expr):
    """The batch size a pipeline computes from its parameters (a converted Pipeline subclass:
    ``super().__init__(batch_size=args.batch_size)``, DALI's SSD example), as the code that makes
    the pipeline can evaluate it: each parameter replaced by what the call passes. Only where the
    pipeline is made right there, the expression reads nothing but parameters, and each of those
    gets an expression that may be evaluated again (then the iterator reads what the pipeline
    read, unless it changed in between: :func:`_why_bound`)."""
    from dali_migrate.call_sites import map_variables
    from dali_migrate.rules.pipe_epoch_size import _param_sources

    why = "the pipeline's batch size is computed from its constructor's arguments"
    construction, found = made(site)
    if found is not None:
        raise CannotConvert(f"{why}, and another function makes the pipeline")
    params = site.pipeline.func.params
    names = {q.name.value for q in [*params.posonly_params, *params.params, *params.kwonly_params]}
    if params.star_arg is not None and isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None:
        raise CannotConvert(f"{why}, which takes *args/**kwargs")
    if not cst_walk.variables(expr) <= names:
        raise CannotConvert(f"{why}, and it reads names other than those arguments")
    if any(a.star for a in construction.args):
        raise CannotConvert(f"{why}, and the call passes *args/**kwargs")
    sources = _param_sources(site.pipeline, construction)

    def value_of(name: str):
        if name not in sources:
            raise CannotConvert(f"{why}: `{name}` has no value at this call")
        value, default = sources[name]
        if default or not repeatable(value):
            # (a default is evaluated where the pipeline is defined; an expression would run twice)
            raise CannotConvert(f"{why}: `{name}` gets {code(value)} here")
        return value

    return map_variables(expr, value_of)


def _why_bound(site, call: cst.Call, value) -> Optional[str]:
    """Why the batch size ``value`` must be bound once before the pipeline is made to be read at
    ``call`` (:func:`_bound_once`; the marker where it cannot be), or None: it may be written again."""
    if not repeatable(value):
        return "the pipeline's batch size is an expression that would run twice"
    changed = _changed_before_read(site, call, value)
    if changed:
        # written again at the iterator it would read the new value: bound once, it reads the old
        return f"the pipeline's batch size reads `{changed}`, which may be assigned again before the iterator is made"
    return None


def _changed_before_read(site, call: cst.Call, value) -> Optional[str]:
    """``pipe_epoch_size.changed_before_read`` for the batch size: a name ``value`` reads that may
    change before ``call`` reads it again, or None. A factory's call is in_caller's concern."""
    if site.construction is None or site.parents is None or not cst_walk.variables(value):
        return None
    if id(call) not in site.parents.span:
        # the call as other rules rewrote its arguments (`size=pipe.epoch_size(...)`), at rewrite
        # time: planned on the original, whose decision to bind the value is kept
        bound = _BOUND_NAMES.get(site.parents, {}).get(id(site.construction))
        return sorted(cst_walk.variables(value))[0] if bound is not None else None
    return changed_before_read(site, call, value, any_global=True)


#: per file (its parents index): {id(the pipeline's call): the name its batch size is bound to},
#: and under "taken" the names given so far: every rule call for one call must give it the same
#: name, and two calls must not share one; under "rules" the rules that bind and read each name
_BOUND_NAMES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _bound_once(site, call: cst.Call, key: str, value):
    """(a fresh name, the statement that makes the pipeline, the argument) where the batch size the
    pipeline is made with (``pipe = P(batch_size=args.batch if train else args.val_batch, ...)``)
    can be bound to a name in a statement of its own right before that one, for the pipeline's call
    and the iterator to read; None where that would not be Python's order or the iterator cannot
    read the name.

    The expression then runs before everything the statement evaluated before it, so nothing may
    be: it must be the call's first argument and the callee a plain name, the pipeline's own (the
    value of an assignment is evaluated before its targets). Reading that name runs no code of the
    file, except in a class body (a metaclass's namespace), which is refused, and the expression
    must not rebind it (a walrus in it is refused; the tool takes the name to hold the pipeline
    wherever the file calls it). The statement must be the first of its line (not inside a lambda,
    a comprehension, an ``if`` test, a ``with`` item, nor after ``a = 1;``), in the iterator's own
    scope, so that the iterator reads the value the pipeline was made with (a fresh name, bound
    only there).
    """
    construction = site.construction
    parents = site.parents
    if construction is None or parents is None or site.comp is not None:
        return None  # made by a factory of the file: the expression is the factory's, not the caller's
    if not (isinstance(construction.func, cst.Name) and construction.func.value == site.pipeline.name):
        return None
    args = construction.args
    if not args or args[0].value is not value or args[0].keyword is None or args[0].keyword.value != key:
        return None  # the decorator's value, a later argument, or a positional one
    if any(a.star for a in args):
        return None
    assign = parents.of(construction)
    stmt = parents.of(assign)
    if not (isinstance(assign, cst.Assign) and assign.value is construction
            and isinstance(stmt, cst.SimpleStatementLine) and stmt.body[0] is assign):
        return None
    planned = _BOUND_NAMES.get(parents, {}).get(id(construction))
    if id(call) not in parents.span:
        # the call as other rules rewrote its arguments, at rewrite time: its scope was checked
        # on the original when the name was given
        return (planned, stmt, args[0]) if planned is not None else None
    scope = parents.scope(stmt)
    if scope is not parents.scope(call) or isinstance(scope, cst.ClassDef):
        return None
    if any(isinstance(n, cst.NamedExpr) for n in cst_walk.walk(value)):
        return None
    names = _BOUND_NAMES.setdefault(parents, {"taken": set(site.taken)})
    name = names.get(id(construction))
    if name is None:
        name = names[id(construction)] = fresh_name("batch_size", names["taken"])
    return name, stmt, args[0]


def _binding(site, call: cst.Call):
    """(name, statement, argument) of the batch size :func:`_batch_size` gave as a name, or None."""
    if "batch_size" in site.pipeline.computed_settings:
        return None  # (no argument of the call carries it: _computed_batch_size)
    try:
        made(site)
        value = made_value(site, site.pipeline.bound_settings.get("batch_size", "batch_size"), "batch_size")
    except CannotConvert:
        return None
    if value is None or _why_bound(site, call, value) is None:
        return None
    return _bound_once(site, call, site.pipeline.bound_settings.get("batch_size", "batch_size"), value)


def _asked_rule(asked: list, bind=None) -> CallSiteRule:
    """The rule that puts ``asked`` (the pipeline's questions about the process, asked again:
    pipe_epoch_size.asked_statements) right before the statement that makes the pipeline, and
    after them what ``bind`` puts there (its batch size bound once)."""
    def rewrite(stmt, receiver, site):
        return [*asked, *([bind.rewrite(stmt, receiver, site)] if bind is not None else [])]

    return CallSiteRule(
        id="torch-iterator-asked",
        summary="the pipeline's questions about the process (try/except), asked again before it is made",
        receiver="iterator",
        rewrite=rewrite,
    )


def _bind_rules(name: str, value, parents=None) -> tuple:
    """(the rule that puts ``name = value`` before the statement that makes the pipeline (see
    engine._Apply), the rule that makes the pipeline's argument read ``name``); one pair per name
    and file, whichever iterator over the pipeline planned it."""
    kept = _BOUND_NAMES.get(parents, {}).setdefault("rules", {}) if parents is not None else {}
    if name in kept:
        return kept[name]
    # The argument is left before its statement: the statement binds the argument's value as other
    # rules rewrote it (`other.epoch_size("Reader") // 8` of a converted pipeline), not as written.
    rewritten = {}

    def read_name(arg, receiver, site):
        rewritten["value"] = arg.value
        return arg.with_changes(value=cst.Name(name))

    bind = CallSiteRule(
        id="torch-iterator-batch-size",
        summary="the batch size of a pipeline an iterator reads, bound once before the pipeline is made",
        receiver="iterator",
        rewrite=lambda stmt, receiver, site: assignment(name, rewritten.get("value", value)),
    )
    read = CallSiteRule(
        id="torch-iterator-batch-size-arg",
        summary="the pipeline's call reads the batch size bound before it",
        receiver="iterator",
        rewrite=read_name,
    )
    kept[name] = bind, read
    return bind, read


def _group(call: cst.Call, site, kind: str, fw: Framework):
    """The sites of the pipelines when the iterator gets a list of several (or a comprehension's
    list), None when it gets one pipeline, or a reason (str)."""
    members = pipe_lists.members(call, site)
    if members is None:
        k = iterator_subclasses.skipped(call, site.parents, site.names)
        pipes = call.args[k].value if len(call.args) > k else None
        if isinstance(pipes, (cst.List, cst.Tuple)) and len(pipes.elements) != 1:
            return f"{_short(kind, fw)} over an empty list of pipelines"
        return None
    if fw.multi_class is None:
        return f"{_short(kind, fw)} over several pipelines (one per GPU): convert by hand, one converted generator per GPU"
    if any(m is None or m.construction is None for m in members):
        return f"{_short(kind, fw)} over several pipelines, one of which is not a pipeline variable assigned once here from a pipeline dali-migrate converts; convert by hand"
    if len({id(m.construction) for m in members}) != len(members):
        return f"{_short(kind, fw)} over a list holding one pipeline twice; convert by hand"
    if any(reader_needs_context(m.pipeline) for m in members):
        # Native ndd keeps a GPU reader's context entered between batches; generators taking
        # turns on one thread would leave contexts out of order (rules/pipeline_def.py).
        return f"{_short(kind, fw)} over several pipelines whose readers run on the GPU: convert by hand"
    return members


def _plan(call: cst.Call, site, fw: Framework = TORCH):
    """(new keyword args, output_map, the sites of several pipelines or None) or a reason (str).

    Asked of one iterator by its blocker, its rewrite (planned, then applied), what it adds and the
    helpers it needs, with the same call and site: worked out once per conversion for each. A call
    as other rules rewrote it is another node, planned anew. Callers only read the answer."""
    return cst_walk.remembered_with(_planned, call, site, fw)


def _planned(call: cst.Call, site, fw: Framework):
    q, subclass = _iterator(call, site, fw)
    kind = fw.iterators[q]
    skip = iterator_subclasses.skipped(call, site.parents, site.names)
    if subclass is not None:
        reason = iterator_subclasses.problem(subclass, call, site.parents)
        if reason:
            return reason
        what = f"class {subclass.name.value} (derived from the DALI iterator)"
        clash = sorted(set(iterator_subclasses.leading(subclass)) & set(fw.params[kind]))
        if clash and not iterator_subclasses.own_init(call, site.parents):
            # (a keyword argument of that name would go to the class's parameter, not the iterator's)
            return f"{what}: its own parameter `{clash[0]}` is also a parameter of {_short(kind, fw)}: convert by hand"
        if any(arg.keyword is not None or arg.star for arg in call.args[:skip]):
            return f"{what}: its own parameters are not all given first, by position, here: convert by hand"
    bound = _args(call, kind, fw, skip)
    if isinstance(bound, str):
        return bound
    group = _group(call, site, kind, fw)
    if isinstance(group, str):
        return group
    members = group or [site]
    source = None
    if any(op.fn_name == "external_source" for m in members for _, op in m.pipeline.op_calls):
        if group is not None:
            return f"{_short(kind, fw)} over several pipelines with fn.external_source: convert by hand"
        from dali_migrate.rules.external_source import restart_blocker

        why = restart_blocker(site.pipeline)
        if why:
            return f"{_short(kind, fw)} over a pipeline with fn.external_source, which it resets where the source ends: {why}; convert by hand"
        source = _prefetch_args(site)
        if isinstance(source, str):
            return f"{_short(kind, fw)} over a pipeline with fn.external_source: {source}; convert by hand"
    if kind == "generic" and "output_map" not in bound:
        return f"{_short(kind, fw)} without output_map"
    for key, defaults in fw.defaults_only.items():
        if key in bound and not (isinstance(bound[key], cst.Name) and bound[key].value in defaults):
            return f"{_short(kind, fw)}({key}=...): {fw.unconverted[key]}"
    if site.handed is not None:
        reason = _handed_reason(bound, kind, fw, group, site)
        if reason:
            return reason
        new = []  # the emitted class reads it from the first batches (BATCH_FROM_DATA_EDITS)
    else:
        try:
            sizes = [_batch_size(m, call, alone=group is None) for m in members]
        except CannotConvert as e:
            return f"{_short(kind, fw)}: {e}; convert by hand"
        bs = sizes[0]
        if any(not b.deep_equals(bs) for b in sizes[1:]):
            # DALI asserts that they are equal; the tool cannot tell whether they are.
            return f"{_short(kind, fw)} over pipelines whose batch sizes are written differently; convert by hand"
        if site.comp is not None and names_in(site.comp.for_in.target) & names_in(bs):
            return f"{_short(kind, fw)}: the batch size depends on the comprehension's variable; convert by hand"
        new = [("batch_size", bs)]
    if "reader_name" in bound:
        name = bound["reader_name"]
        metas = []
        for m in members:
            chosen = named_reader(m.pipeline, name, call, m.parents, m)
            if chosen is None:
                return f"{_short(kind, fw)}(reader_name=...): cannot match the name to the pipeline's reader; convert by hand"
            try:
                # (one pipeline: the questions it asks in try/except may be asked again before it is made, _also)
                reader = reader_expression(m, chosen, asked_ok=group is None)
            except CannotConvert as e:
                return f"{_short(kind, fw)}(reader_name=...): {e}; convert by hand"
            changed = reader_changed(m, call, reader, "the iterator")
            if changed:
                return f"{_short(kind, fw)}(reader_name=...): {changed}"
            metas.append(cst.Call(func=cst.Attribute(value=_one_line(reader), attr=cst.Name("get_metadata"))))
        if group is None:
            meta = metas[0]
        elif site.comp is not None:
            # The comprehension again, each element's reader in place of its pipeline.
            meta = cst.ListComp(elt=metas[0], for_in=site.comp.for_in.with_changes(whitespace_before=cst.SimpleWhitespace(" ")))
        else:
            meta = cst.List([cst.Element(x) for x in metas])
        new.append(("reader_meta", meta))
    for key in ("size", "auto_reset", "last_batch_padded"):
        if key in bound:
            new.append((key, bound[key]))
    policy = None
    if "fill_last_batch" in bound:
        value = bound["fill_last_batch"]
        if not (isinstance(value, cst.Name) and value.value in ("True", "False", "None")):
            return f"{_short(kind, fw)}(fill_last_batch=...) is not True/False written out: convert by hand"
        if value.value != "None":
            policy = "FILL" if value.value == "True" else "PARTIAL"
    if policy is None and "last_batch_policy" in bound:
        written = bound["last_batch_policy"]
        policy = _policy(written, site.names, fw)
        if policy is None and set(fw.policies) != set(_POLICIES):
            return f"{_short(kind, fw)}: last_batch_policy is not a LastBatchPolicy member written out; convert by hand"
        if policy is None:
            # computed (`LastBatchPolicy.DROP if training else LastBatchPolicy.PARTIAL`): the member's
            # name where the iterator is made, as the class takes it; every policy is served
            new.append(("last_batch_policy", cst.Attribute(value=_parenthesized(written), attr=cst.Name("name"))))
    if policy is not None and policy not in fw.policies:
        return f"{_short(kind, fw)}(last_batch_policy=LastBatchPolicy.{policy}): {fw.refused_policy[policy]}"
    if policy is not None and policy != "FILL":
        new.append(("last_batch_policy", cst.SimpleString(f'"{policy}"')))
    if "prepare_first_batch" in bound:
        new.append(("prepare_first_batch", bound["prepare_first_batch"]))
    if kind == "generic":
        output_map = bound["output_map"]
    else:
        output_map = cst.List([cst.Element(cst.SimpleString('"data"')), cst.Element(cst.SimpleString('"label"'))])
    return new, output_map, group, source


def _handed_reason(bound: dict, kind: str, fw: Framework, group, site) -> Optional[str]:
    """Why an iterator over pipelines that another function made and handed here (``site.handed``)
    cannot be converted, or None. The arguments the pipelines were made with are not visible here:
    the batch size is read from the first batches, which DALI's iterator also draws when it is made
    (``prepare_first_batch``), and exactly (DALI asserts that every batch has its pipelines' batch
    size where the iterator has a reader or a size, which it must have over several pipelines);
    a reader's metadata cannot be read from a batch."""
    call = site.handed[0]
    where = f"the pipelines come from `{code(call).strip().splitlines()[0]}`"
    if group is None:
        return f"{_short(kind, fw)} over pipelines handed to this function: convert by hand"
    if "reader_name" in bound:
        return (f"{_short(kind, fw)}(reader_name=...): {where}, and the arguments their readers were made with "
                f"are not visible here: convert by hand (give the reader's metadata from where they are made)")
    first = bound.get("prepare_first_batch")
    if first is not None and not (isinstance(first, cst.Name) and first.value == "True"):
        return (f"{_short(kind, fw)}(prepare_first_batch=...): {where}, so their batch size is read from their first "
                f"batches, which are drawn when the iterator is made only with prepare_first_batch=True: convert by hand")
    return None


#: (old, new) edits to the multi-pipeline class for pipelines whose batch size the converted code
#: cannot see where the iterator is made (_handed_reason): ``batch_size=None`` draws the first
#: batches when the iterator is made and reads it from them; _take returns those first.
BATCH_FROM_DATA_EDITS = (
    ("*, batch_size, reader_meta=None", "*, batch_size=None, reader_meta=None"),
    ("        self._reader = reader_meta is not None\n",
     "        self._drawn = None\n"
     "        if batch_size is None:\n"
     "            # The pipelines came without their batch size: DALI reads it from them and asserts\n"
     "            # that every batch has it; the first batches, drawn where DALI draws them, tell it.\n"
     "            self._drawn = [next(pipe) for pipe in self._pipes]\n"
     "            self.batch_size = batch_size = self._drawn[0][0].batch_size\n"
     "        self._reader = reader_meta is not None\n"),
    ("        try:\n            outputs = [next(pipe) for pipe in self._pipes]\n",
     "        if self._drawn is not None:\n"
     "            outputs, self._drawn = self._drawn, None\n"
     "            return outputs\n"
     "        try:\n            outputs = [next(pipe) for pipe in self._pipes]\n"),
)


#: DALI's defaults for the pipeline arguments that decide when a pipeline draws from its sources
_PREFETCH_DEFAULTS = (("prefetch_queue_depth", 2), ("exec_pipelined", True))


def _prefetch_args(site):
    """[(keyword, value)] for PrefetchedPipeline: the pipeline's ``prefetch_queue_depth`` and
    ``exec_pipelined`` where they are not DALI's defaults; or why they cannot be told (a str)."""
    info = site.pipeline
    dec = info.decorator.decorator if info.decorator is not None else None
    found = []
    for key, default in _PREFETCH_DEFAULTS:
        try:
            value = made_value(site, key)
        except CannotConvert as e:
            return str(e)
        if value is None and isinstance(dec, cst.Call):
            arg = kwarg(dec, key)
            value = arg.value if arg is not None else None
        if value is None:
            continue
        if isinstance(default, bool):
            literal = value.value == "True" if isinstance(value, cst.Name) and value.value in ("True", "False") else None
        else:
            literal = value.evaluated_value if isinstance(value, cst.Integer) else None
        if literal is None:
            return f"its {key}= is not written as {'True/False' if isinstance(default, bool) else 'a number'}, which decides when DALI draws from the source"
        if literal != default:
            found.append((key, value))
    return found


def _parenthesized(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr`` as it can stand before ``.attr``."""
    if isinstance(expr, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) or expr.lpar:
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _one_line(call: cst.BaseExpression) -> cst.BaseExpression:
    """The reader call on one line: it now sits inside another call's arguments. (A reader
    chosen by ``if``: ``(a if test else b)``, each branch's call on one line.)"""
    if isinstance(call, cst.IfExp):
        return call.with_changes(body=_one_line(call.body), orelse=_one_line(call.orelse))
    args = list(call.args)
    space = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    args = [a.with_changes(comma=space, whitespace_after_arg=cst.SimpleWhitespace("")) for a in args[:-1]] + [
        a.with_changes(comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=cst.SimpleWhitespace("")) for a in args[-1:]
    ]
    return call.with_changes(args=args, whitespace_before_args=cst.SimpleWhitespace(""))


def blocker(call, site, fw: Framework = TORCH):
    planned = _plan(call, site, fw)
    return planned if isinstance(planned, str) else None


def _rewrite(call, receiver, site, fw: Framework = TORCH):
    new, output_map, group, source = _plan(call, site, fw)
    qualified, subclass = _iterator(call, site, fw)
    skip = iterator_subclasses.skipped(call, site.parents, site.names)
    own, call = call.args[:skip], call.with_changes(args=call.args[skip:])  # a subclass's own arguments stay first
    pipe = call.args[0].value
    if isinstance(pipe, (cst.List, cst.Tuple)) and group is None:
        pipe = pipe.elements[0].value
    eq = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
    if source is not None:
        # DALI's iterator drives the pipeline: PrefetchedPipeline keeps its queue and its reset()
        wrapper = fresh_name(PREFETCHED, set(site.taken)) if PREFETCHED in site.taken else PREFETCHED
        pipe = cst.Call(cst.Name(wrapper), [cst.Arg(pipe), *(cst.Arg(value=v, keyword=cst.Name(k), equal=eq) for k, v in source)])
    args = [cst.Arg(pipe), cst.Arg(output_map)] + [cst.Arg(value=v, keyword=cst.Name(k), equal=eq) for k, v in new]
    laid = _laid_out(call, args, ["pipelines", "output_map", *(k for k, _ in new)], fw.params[fw.iterators[qualified]])
    if subclass is not None:
        return call.with_changes(args=[*own, *laid])  # the class stays; its base becomes the emitted class (_also)
    return call.with_changes(func=cst.Name(_class_name(site, fw, multi=group is not None, source=source is not None)), args=laid)


#: the iterator's parameters whose value goes on as another argument of the emitted class's call
_CARRIED_AS = {"reader_name": "reader_meta", "fill_last_batch": "last_batch_policy"}


def _comment_space(arg: cst.Arg, last: bool):
    """The line break after ``arg`` where it holds what its author wrote (a comment at the end of
    its line, comment lines below it), else None."""
    spaces = [arg.comma.whitespace_after] if isinstance(arg.comma, cst.Comma) else []
    if last:
        spaces.append(arg.whitespace_after_arg)
    for ws in spaces:
        if isinstance(ws, cst.ParenthesizedWhitespace) and (
            ws.first_line.comment is not None or any(line.comment is not None for line in ws.empty_lines)
        ):
            return ws
    return None


def _laid_out(call: cst.Call, args: list, keys: list, signature: tuple) -> list:
    """``args`` (the emitted class's, one parameter name per ``keys``) in the call's layout: the
    original's first comma (", " or a line break) between them, its closing as it was, and each
    original argument's comments after the argument that carries its value (comments of what
    goes away after the last one): the converted code keeps what its author wrote."""
    old = call.args
    sep = old[0].comma if len(old) > 1 and isinstance(old[0].comma, cst.Comma) else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    if isinstance(sep.whitespace_after, cst.ParenthesizedWhitespace):  # (its comments are the first argument's)
        sep = sep.with_changes(whitespace_after=sep.whitespace_after.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=[]))
    params = [arg.keyword.value if arg.keyword is not None else (signature[i] if i < len(signature) else None)
              for i, arg in enumerate(old)]
    comments: dict = {}  # index in args -> the line break holding an original argument's comments
    orphans: list = []
    spaces = [_comment_space(arg, i == len(old) - 1) for i, arg in enumerate(old)]
    for i, space in enumerate(spaces):
        if space is None:
            continue
        name = _CARRIED_AS.get(params[i], params[i]) if params[i] is not None else None
        if name in keys and keys.index(name) not in comments:
            comments[keys.index(name)] = space
        else:
            orphans.append(space)
    closing = old[-1].whitespace_after_arg if not isinstance(old[-1].comma, cst.Comma) else old[-1].comma.whitespace_after
    laid = []
    for i, arg in enumerate(args):
        space = comments.get(i)
        if i < len(args) - 1:
            if space is None:
                laid.append(arg.with_changes(comma=sep))
            else:
                indent = sep.whitespace_after.last_line if isinstance(sep.whitespace_after, cst.ParenthesizedWhitespace) else space.last_line
                laid.append(arg.with_changes(comma=sep.with_changes(whitespace_after=space.with_changes(last_line=indent))))
            continue
        # the last: the original closing (a trailing comma or none, the line break before `)`)
        if space is None and not orphans and spaces[-1] is None:
            laid.append(arg.with_changes(comma=old[-1].comma, whitespace_after_arg=old[-1].whitespace_after_arg))
            continue
        end = closing.last_line if isinstance(closing, cst.ParenthesizedWhitespace) else cst.SimpleWhitespace("")
        first = space.first_line if space is not None else cst.TrailingWhitespace()
        lines = [*(space.empty_lines if space is not None else []),
                 *(cst.EmptyLine(indent=True, whitespace=cst.SimpleWhitespace(""), comment=o.first_line.comment)
                   for o in orphans if o.first_line.comment is not None),
                 *(line for o in orphans for line in o.empty_lines)]
        after = cst.ParenthesizedWhitespace(first_line=first, empty_lines=lines, indent=True, last_line=end)
        if isinstance(old[-1].comma, cst.Comma):
            laid.append(arg.with_changes(comma=old[-1].comma.with_changes(whitespace_after=after)))
        else:
            laid.append(arg.with_changes(comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=after))
    return laid


def _also(call, site, fw: Framework = TORCH) -> list:
    """A class of the file derived from the iterator gets the emitted class as its base; a batch
    size bound to a name before the pipeline is made (:func:`_bound_once`) is bound there."""
    found = []
    planned = _plan(call, site, fw)
    bound = _binding(site, call) if planned[2] is None and site.handed is None else None
    asked = asked_statements(site) if planned[2] is None and site.construction is not None else []
    if bound is not None:
        name, stmt, arg = bound
        bind, read = _bind_rules(name, arg.value, site.parents)
        if asked:
            bind = _asked_rule(asked, bind)
            asked = []
        found += [(stmt, bind), (arg, read)]
    if asked:
        found.append((site.parents.statement(site.construction), _asked_rule(asked)))
    subclass = _iterator(call, site, fw)[1]
    if subclass is None:
        return found
    multi, source = planned[2] is not None, planned[3] is not None
    base = CallSiteRule(
        id=f"{fw.helper}-base",
        summary="the base of a class derived from the DALI iterator",
        receiver="iterator",
        rewrite=lambda arg, receiver, site: arg.with_changes(value=cst.Name(_class_name(site, fw, multi=multi, source=source))),
    )
    return [*found, (subclass.bases[0], base)]


def _helpers(site, fw: Framework = TORCH, call=None):
    planned = _plan(call, site, fw) if call is not None else None
    if isinstance(planned, tuple) and planned[2] is not None:
        # The class with BATCH_FROM_DATA_EDITS (same name) also takes batch_size=: where a file
        # needs both, its key (the other's + SUPERSET_SUFFIX) makes the engine keep it alone.
        if site.handed is not None:
            edits = (*fw.multi_edits(site), *BATCH_FROM_DATA_EDITS)
            key = fw.multi_helper + SUPERSET_SUFFIX
        else:
            edits, key = fw.multi_edits(site), fw.multi_helper
        return {key: class_source(_class_name(site, fw, multi=True), edits, cls=MULTI_CLASS_NAME)}
    if isinstance(planned, tuple) and planned[3] is not None:
        wrapper = fresh_name(PREFETCHED, set(site.taken)) if PREFETCHED in site.taken else PREFETCHED
        return {
            f"{fw.helper}-source": class_source(_class_name(site, fw, source=True), (*fw.edits(site), *SOURCE_EDITS)),
            PREFETCHED_HELPER: class_source(wrapper, cls=PREFETCHED),
        }
    return {fw.helper: class_source(_class_name(site, fw), fw.edits(site))}


def make_rule(fw: Framework, id: str, summary: str) -> IteratorRule:
    return IteratorRule(
        id=id,
        summary=summary,
        receiver="iterator",
        methods=tuple(fw.iterators),
        rewrite=lambda call, receiver, site: _rewrite(call, receiver, site, fw),
        blocker=lambda call, site: blocker(call, site, fw),
        helpers=lambda site, call=None: _helpers(site, fw, call),
        also=lambda call, site: _also(call, site, fw),
    )


RULE = make_rule(
    TORCH,
    id="torch-iterator",
    summary="PyTorch DALIGenericIterator / DALIClassificationIterator over one converted pipeline becomes DaliTorchIterator, a class with the same epoch semantics written into the file",
)
