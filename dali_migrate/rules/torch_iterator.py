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

Left to a person (the pipeline and the iterator stay, with a marker): several pipelines (one per
GPU), a ``last_batch_policy`` / ``fill_last_batch`` that is not written out, a ``reader_name``
that is not the pipeline's reader's ``name=``, a pipeline made by a factory (its reader's
arguments cannot be matched), a batch size the tool cannot see, ``*args``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Callable

import libcst as cst

from dali_migrate.cst_util import fresh_name, kwarg
from dali_migrate.rules.base import CallSiteRule
from dali_migrate.rules.pipe_epoch_size import _SIMPLE, CannotConvert, _param_values, reader_expression

CLASS_NAME = "DaliTorchIterator"
_ITERATORS = {
    "nvidia.dali.plugin.pytorch.DALIGenericIterator": "generic",
    "nvidia.dali.plugin.pytorch.DALIClassificationIterator": "classification",
}
_PARAMS = {
    "generic": ["pipelines", "output_map", "size", "reader_name", "auto_reset", "fill_last_batch",
                "dynamic_shape", "last_batch_padded", "last_batch_policy", "prepare_first_batch"],
    "classification": ["pipelines", "size", "reader_name", "auto_reset", "fill_last_batch",
                       "dynamic_shape", "last_batch_padded", "last_batch_policy", "prepare_first_batch"],
}
_POLICIES = ("FILL", "DROP", "PARTIAL")
_POLICY_CLASSES = ("nvidia.dali.plugin.base_iterator.LastBatchPolicy", "nvidia.dali.plugin.pytorch.LastBatchPolicy")


def class_source(name: str = CLASS_NAME) -> str:
    text = Path(__file__).resolve().parent.parent.joinpath("emitted_torch_iterator.py").read_text()
    body = text[text.index(f"\nclass {CLASS_NAME}:") + 1 :]
    return body.replace(CLASS_NAME, name)


@dataclasses.dataclass(frozen=True)
class IteratorRule(CallSiteRule):
    #: (site) -> {key: module-level source the converted file needs}
    helpers: Callable = lambda site: {}


def _class_name(site) -> str:
    return fresh_name(CLASS_NAME, set(site.taken)) if CLASS_NAME in site.taken else CLASS_NAME


def _args(call: cst.Call, kind: str):
    """{parameter: expression} as the iterator's signature binds them, or a reason."""
    params = _PARAMS[kind]
    bound = {}
    for i, arg in enumerate(call.args):
        if arg.star:
            return f"{_short(kind)}(...) with *args/**kwargs: convert by hand"
        if arg.keyword is None:
            if i >= len(params):
                return f"{_short(kind)}(...) with more positional arguments than it takes"
            bound[params[i]] = arg.value
        else:
            if arg.keyword.value not in params:
                return f"{_short(kind)}(...) gets {arg.keyword.value}=, which dali-migrate does not know"
            bound[arg.keyword.value] = arg.value
    return bound


def _short(kind: str) -> str:
    return "DALIGenericIterator" if kind == "generic" else "DALIClassificationIterator"


def _policy(expr, names):
    q = names.qualify(expr) if names is not None else None
    if q is None:
        return None
    cls, _, member = q.rpartition(".")
    return member if cls in _POLICY_CLASSES and member in _POLICIES else None


def _batch_size(site):
    info = site.pipeline
    if site.construction is None:
        raise CannotConvert("the pipeline was made by another function, whose arguments cannot be matched")
    values = _param_values(info, site.construction)
    key = info.bound_settings.get("batch_size", "batch_size")
    value = values.get(key, info.settings.get("batch_size"))
    if value is None:
        raise CannotConvert("the pipeline's batch size is not given where it is made")
    if not isinstance(value, _SIMPLE):
        raise CannotConvert("the pipeline's batch size is an expression that would run twice")
    return value


def _plan(call: cst.Call, site):
    """(new keyword args, output_map) or a reason (str)."""
    kind = _ITERATORS[site.names.qualify(call.func)]
    bound = _args(call, kind)
    if isinstance(bound, str):
        return bound
    if any(op.fn_name == "external_source" for _, op in site.pipeline.op_calls):
        return f"{_short(kind)} over a pipeline with fn.external_source: at the source's end the original restarts it on reset(), the converted generator ends; convert by hand"
    pipes = bound.get("pipelines")
    if isinstance(pipes, (cst.List, cst.Tuple)) and len(pipes.elements) != 1:
        return f"{_short(kind)} over several pipelines (one per GPU): convert by hand, one converted generator per GPU"
    if kind == "generic" and "output_map" not in bound:
        return "DALIGenericIterator without output_map"
    try:
        bs = _batch_size(site)
    except CannotConvert as e:
        return f"{_short(kind)}: {e}; convert by hand"
    new = [("batch_size", bs)]
    if "reader_name" in bound:
        name = bound["reader_name"]
        reader_name = kwarg(site.pipeline.reader_call, "name") if site.pipeline.reader_call is not None else None
        if not (
            isinstance(name, cst.SimpleString)
            and reader_name is not None
            and isinstance(reader_name.value, cst.SimpleString)
            and reader_name.value.evaluated_value == name.evaluated_value
        ):
            return f"{_short(kind)}(reader_name=...): cannot match the name to the pipeline's reader; convert by hand"
        try:
            reader = reader_expression(site)
        except CannotConvert as e:
            return f"{_short(kind)}(reader_name=...): {e}; convert by hand"
        new.append(("reader_meta", cst.Call(func=cst.Attribute(value=_one_line(reader), attr=cst.Name("get_metadata")))))
    for key in ("size", "auto_reset", "last_batch_padded"):
        if key in bound:
            new.append((key, bound[key]))
    policy = None
    if "fill_last_batch" in bound:
        value = bound["fill_last_batch"]
        if not (isinstance(value, cst.Name) and value.value in ("True", "False", "None")):
            return f"{_short(kind)}(fill_last_batch=...) is not True/False written out: convert by hand"
        if value.value != "None":
            policy = "FILL" if value.value == "True" else "PARTIAL"
    if policy is None and "last_batch_policy" in bound:
        policy = _policy(bound["last_batch_policy"], site.names)
        if policy is None:
            return f"{_short(kind)}: last_batch_policy is not a LastBatchPolicy member written out; convert by hand"
    if policy is not None and policy != "FILL":
        new.append(("last_batch_policy", cst.SimpleString(f'"{policy}"')))
    if "prepare_first_batch" in bound:
        new.append(("prepare_first_batch", bound["prepare_first_batch"]))
    if kind == "generic":
        output_map = bound["output_map"]
    else:
        output_map = cst.List([cst.Element(cst.SimpleString('"data"')), cst.Element(cst.SimpleString('"label"'))])
    return new, output_map


def _one_line(call: cst.Call) -> cst.Call:
    """The reader call on one line: it now sits inside another call's arguments."""
    args = list(call.args)
    space = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    args = [a.with_changes(comma=space, whitespace_after_arg=cst.SimpleWhitespace("")) for a in args[:-1]] + [
        a.with_changes(comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=cst.SimpleWhitespace("")) for a in args[-1:]
    ]
    return call.with_changes(args=args, whitespace_before_args=cst.SimpleWhitespace(""))


def blocker(call, site):
    planned = _plan(call, site)
    return planned if isinstance(planned, str) else None


def _rewrite(call, receiver, site):
    new, output_map = _plan(call, site)
    pipe = call.args[0].value
    if isinstance(pipe, (cst.List, cst.Tuple)):
        pipe = pipe.elements[0].value
    eq = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
    args = [cst.Arg(pipe), cst.Arg(output_map)] + [cst.Arg(value=v, keyword=cst.Name(k), equal=eq) for k, v in new]
    # Keep the call's layout: the original's first comma (", " or a line break) between arguments.
    old = call.args
    sep = old[0].comma if len(old) > 1 and isinstance(old[0].comma, cst.Comma) else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    laid = [a.with_changes(comma=sep) for a in args[:-1]]
    laid.append(args[-1].with_changes(comma=old[-1].comma, whitespace_after_arg=old[-1].whitespace_after_arg))
    return call.with_changes(func=cst.Name(_class_name(site)), args=laid)


def _helpers(site):
    name = _class_name(site)
    return {"torch-iterator": class_source(name)}


RULE = IteratorRule(
    id="torch-iterator",
    summary="PyTorch DALIGenericIterator / DALIClassificationIterator over one converted pipeline becomes DaliTorchIterator, a class with the same epoch semantics written into the file",
    receiver="iterator",
    methods=tuple(_ITERATORS),
    rewrite=_rewrite,
    blocker=blocker,
    helpers=_helpers,
)
